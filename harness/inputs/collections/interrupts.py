"""Interrupts that a long in-process conversion cannot swallow."""

from __future__ import annotations

import _thread
import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

REPEAT_S = 0.5


@contextlib.contextmanager
def interrupts_that_stick() -> Iterator[None]:
    """Ctrl-C and SIGTERM raise KeyboardInterrupt in the block, and again every REPEAT_S until it is left. Python
    swallows an exception raised while a finalizer runs ("Exception ignored in: Pixmap.__del__" from pymupdf,
    mid-conversion), and the conversion of a long PDF then ran on for minutes after the Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():  # signal handlers live in the main thread only
        yield
        return
    interrupted, left = threading.Event(), threading.Event()

    def repeat() -> None:
        while not left.wait(REPEAT_S):
            _thread.interrupt_main()

    repeater = threading.Thread(target=repeat, name="interrupt-repeater", daemon=True)

    def raise_interrupt(signum: int, frame: FrameType | None) -> None:
        if left.is_set():  # a repeat that came after the block was left: the first one is being handled
            return
        if not interrupted.is_set():
            interrupted.set()
            repeater.start()
        raise KeyboardInterrupt

    previous = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    for number in previous:
        signal.signal(number, raise_interrupt)
    try:
        yield
    finally:
        left.set()
        if interrupted.is_set():
            repeater.join()
        for number, handler in previous.items():
            signal.signal(number, handler)
