import sys

from harness.cli.main import main

if __name__ == "__main__":  # not when a worker process (multiprocessing's spawn) imports it again
    sys.exit(main())
