"""Errors that the command line reports as one line and exit code 2."""


class InputError(ValueError):
    """Bad input from the user: a task file, a config file, a flag. The message names where."""
