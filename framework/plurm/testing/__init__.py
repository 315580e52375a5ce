"""Test helpers for Plurm and for plugin authors; the fixtures ship as a pytest plugin.

:mod:`plurm.testing.invariants` holds the combination invariants, for a plugin package to
run on a combination that includes its plugin.
"""

from __future__ import annotations

from plurm.testing.cluster import HookRecorder, JobBuilder, TestCluster

__all__ = ["HookRecorder", "JobBuilder", "TestCluster"]
