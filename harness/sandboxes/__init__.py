"""Sandboxes: a sandbox runs one bash command at a time for one episode. The backends' own packages
(`local`, `docker`, `e2b`) are reached only through the registry and know nothing of each other."""

__all__ = [
    "backend",
    "base",
    "closed_book",
    "command_size",
    "file_opens",
    "file_read",
    "kernel_counters",
    "limits",
    "model_socket",
    "output",
    "pacing",
    "recipe",
    "registry",
    "remote_exec",
    "syscall_policy",
    "tools",
]
