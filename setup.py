"""The compiled parts of Plurm's core (pyproject.toml holds everything else).

Each extension is optional: where no C compiler works, the build goes on without it and
Plurm runs the Python reference of the same code (see plurm.builtin.backfill_profile).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "plurm.builtin._backfill_profile",
            ["framework/plurm/builtin/_backfill_profile.pyx"],
            optional=True,
        )
    ]
)
