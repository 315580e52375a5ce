"""The controller and the interfaces its drivers implement."""

from __future__ import annotations

from plurm.controller.controller import REQUEUE_DELAY, Controller, RequestError
from plurm.controller.runtime import Executor, Timer, TimerHandle

__all__ = ["REQUEUE_DELAY", "Controller", "Executor", "RequestError", "Timer", "TimerHandle"]
