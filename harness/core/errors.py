"""Errors that the command line reports as one line and exit code 2."""


class InputError(ValueError):
    """Bad input from the user: a task file, a config file, a flag. The message names where."""


class NothingSelected(Exception):
    """--task-id, --limit and --shard selected no task: nothing to run, nothing written (its own exit code, for
    a script running shards to tell an empty shard from a failure)."""


def yaml_input_error(path: object, error: Exception) -> InputError:
    """A YAML syntax error as one line: `file:line: invalid YAML: problem`."""
    mark = getattr(error, "problem_mark", None)
    line = f":{mark.line + 1}" if mark is not None else ""
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    return InputError(f"{path}{line}: invalid YAML: {problem}")


def read_text_input(path: object, what: str) -> str:
    """A user's input file as UTF-8 text; unreadable or non-UTF-8 content is one line naming where."""
    try:
        with open(path, "rb") as handle:  # type: ignore[call-overload]
            data = handle.read()
    except OSError as error:
        raise InputError(f"{path}: cannot read {what}: {error.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise InputError(f"{path}:{line}: invalid UTF-8 (byte {data[error.start]:#04x})") from None
