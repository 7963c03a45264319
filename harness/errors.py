"""Errors that the command line reports as one line and exit code 2."""


class InputError(ValueError):
    """Bad input from the user: a task file, a config file, a flag. The message names where."""


def yaml_input_error(path: object, error: Exception) -> InputError:
    """A YAML syntax error as one line: `file:line: invalid YAML: problem`."""
    mark = getattr(error, "problem_mark", None)
    line = f":{mark.line + 1}" if mark is not None else ""
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    return InputError(f"{path}{line}: invalid YAML: {problem}")
