"""Models: a model answers chat messages with one reply."""

__all__ = [
    "aliases",
    "base",
    "concurrency",
    "human",
    "image_tokens",
    "in_flight",
    "litellm_model",
    "oracle",
    "preflight",
    "prices",
    "rate_limits",
    "replay_model",
    "scripted",
]
