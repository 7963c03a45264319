"""Fixtures of the run tests shared by more than one module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.findocmre_models import score_judge
from tests.helpers.openai_server import ScriptedOpenAIServer


@pytest.fixture
def score_judge_server(monkeypatch) -> Iterator[ScriptedOpenAIServer]:
    """A loopback judge giving FinDocMRE's 0-5 scores (`score_judge`)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    server = ScriptedOpenAIServer()
    server.respond = score_judge
    server.start()
    yield server
    server.stop()
