"""Command handlers; exit codes are chosen here only. One table (`COMMANDS` in `cli/main.py`) names every
command with its help line, its parser builder and its handler; each command's module holds its arguments and its
handler, which imports the command's work only when it runs (the top-level --help builds every parser)."""

__all__ = ["command", "main"]
