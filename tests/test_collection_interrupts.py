import os
import signal
import time

import pytest

from harness.inputs.collections.interrupts import interrupts_that_stick


def test_an_interrupt_swallowed_mid_conversion_comes_again_and_the_handlers_are_restored():
    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    swallowed = 0
    with pytest.raises(KeyboardInterrupt), interrupts_that_stick():
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if not swallowed:
                    os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.01)
            except KeyboardInterrupt:
                if swallowed:
                    raise
                swallowed += 1  # as Python does with one raised while a finalizer runs
    assert swallowed == 1
    assert {number: signal.getsignal(number) for number in before} == before
