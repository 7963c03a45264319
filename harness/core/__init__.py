"""What every part shares; imports nothing of harness."""

__all__ = [
    "abandon",
    "bounded",
    "episode_key",
    "errors",
    "facts",
    "fences",
    "images",
    "json_text",
    "names",
    "record",
    "reply",
    "safe_text",
    "status",
    "writable",
    "yaml_safe",
]
