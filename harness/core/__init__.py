"""What every part shares; imports nothing of harness."""

__all__ = [
    "abandon",
    "bounded",
    "episode_key",
    "errors",
    "extras",
    "facts",
    "fences",
    "image_decode",
    "images",
    "json_text",
    "messages",
    "names",
    "plugins",
    "record",
    "reply",
    "safe_text",
    "status",
    "untrusted_json",
    "writable",
    "yaml_safe",
]
