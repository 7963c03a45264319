"""Loopback fakes of the model providers, each applying its provider's documented rules."""
