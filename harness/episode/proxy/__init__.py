"""The model proxy: an episode's model served to an agent that runs inside its sandbox (an installed agent), in the
API the agent speaks (OpenAI's chat completions, Anthropic's messages,
Gemini's generate content), each call one query step of the episode."""

from harness.episode.proxy.server import ModelProxy

__all__ = ["ModelProxy"]
