"""`python -m harness`: runs the command line (`cli/main.py`) and leaves the process without waiting on what a
Ctrl-C abandoned."""

import gc
import os
import sys

from harness.cli.command import EXIT_INTERRUPTED
from harness.cli.main import main

if __name__ == "__main__":  # not when a worker process (multiprocessing's spawn) imports it again
    code = main()
    if code == EXIT_INTERRUPTED:
        # Model calls abandoned at the Ctrl-C may still run in daemon threads, one of them inside an import: the
        # interpreter's shutdown (litellm's client finalizers import modules) would wait on that import's lock for
        # ever. Every row and trajectory is on disk, fsynced, by the time main returns.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    # the objects alive now die with the process: the final collection over litellm's heap took seconds
    # after a run that had already written every row
    gc.freeze()
    sys.exit(code)
