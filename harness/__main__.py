import gc
import sys

from harness.cli.main import main

if __name__ == "__main__":  # not when a worker process (multiprocessing's spawn) imports it again
    code = main()
    # the objects alive now die with the process: the final collection over litellm's heap took seconds
    # after a Ctrl-C that had already written every row
    gc.freeze()
    sys.exit(code)
