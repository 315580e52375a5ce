"""Plurm's built-in plugins: the defaults Slurm ships in its core.

They register through the ``plurm`` distribution's own entry points (pyproject.toml), exactly
as third-party plugins do; nothing in the core imports them by name.
"""
