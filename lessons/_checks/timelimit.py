"""A time limit for answers that never return: SIGALRM in a main thread, else a watchdog thread."""

from __future__ import annotations

import contextlib
import ctypes
import signal
import threading
from collections.abc import Iterator
from typing import Any

#: Seconds an answer may take to be checked before it is stopped.
TIME_LIMIT_S = 10.0


class _TookTooLong(BaseException):
    """Raised into a check that ran past its time limit (a BaseException, so that an answer's own
    ``except Exception`` does not swallow it)."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise `_TookTooLong` in this thread once ``seconds`` have passed (0 or less: no limit)."""
    if not seconds > 0:
        yield
        return
    if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
        def alarm(signum: int, frame: Any) -> None:
            raise _TookTooLong

        old_handler = signal.signal(signal.SIGALRM, alarm)
        old_timer = signal.setitimer(signal.ITIMER_REAL, seconds, 0.5)  # again, should it be swallowed
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)
            if old_timer[0] > 0:
                signal.setitimer(signal.ITIMER_REAL, *old_timer)
        return
    # Windows, or not the main thread: a watchdog raises into this thread (stops Python loops only).
    target, lock, state = threading.get_ident(), threading.Lock(), {"done": False, "fired": False}

    def fire() -> None:
        with lock:
            if not state["done"]:
                state["fired"] = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(target),
                                                           ctypes.py_object(_TookTooLong))

    watchdog = threading.Timer(seconds, fire)
    watchdog.daemon = True
    watchdog.start()
    try:
        yield
    finally:
        with lock:
            state["done"] = True
        watchdog.cancel()
        if state["fired"]:  # it may still be pending: let it land here, not in the caller
            # (never cancel it with SetAsyncExc(id, NULL): on CPython 3.11 that leaves the eval loop
            # spinning as soon as a profile function is set)
            try:
                for _ in range(100):
                    pass
            except _TookTooLong:
                pass
