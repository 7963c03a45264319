"""Each provider's image token rule against the examples its own documentation gives."""

from __future__ import annotations

import pytest

from harness.core.images import check_image, user_message
from harness.models.image_tokens import (
    anthropic_image_tokens,
    gemini_image_tokens,
    image_tokens,
    openai_image_tokens,
    split_images,
)
from harness.models.litellm_model import LiteLLMModel, ProviderSettings
from tests.helpers.images import png


@pytest.mark.parametrize(
    ("width", "height", "detail", "tokens"),
    [(1024, 1024, "high", 765), (2048, 4096, "high", 1105), (4096, 8192, "low", 85)],
)
def test_openai_tiles_match_its_vision_guide(width, height, detail, tokens):
    """platform.openai.com/docs/guides/images-vision, "Calculating costs": 1024x1024 high is 765 (4 tiles),
    2048x4096 high is 1105 (6 tiles), any low is 85."""
    assert openai_image_tokens(width, height, detail) == tokens


@pytest.mark.parametrize(("width", "height", "tokens"), [(200, 200, 54), (1000, 1000, 1334), (1092, 1092, 1590)])
def test_anthropic_area_rule_matches_its_table(width, height, tokens):
    """docs.anthropic.com vision, "Calculate image costs": ~54, ~1334 and ~1590 tokens."""
    assert anthropic_image_tokens(width, height) == tokens


def test_anthropic_scales_a_large_image_down_first():
    assert anthropic_image_tokens(4000, 4000) == anthropic_image_tokens(1092, 1092)
    assert anthropic_image_tokens(784 * 4, 1568 * 4) == anthropic_image_tokens(784, 1568)


@pytest.mark.parametrize(
    ("width", "height", "tokens"), [(384, 384, 258), (600, 400, 258), (1000, 1000, 4 * 258), (1536, 768, 2 * 258)]
)
def test_gemini_counts_258_per_image_or_per_768_tile(width, height, tokens):
    """ai.google.dev/gemini-api/docs/tokens: both sides <= 384 px is 258 tokens, else 258 per 768x768 tile."""
    assert gemini_image_tokens(width, height) == tokens


def test_providers_use_their_own_rule():
    assert image_tokens("anthropic", 1000, 1000) == 1334
    assert image_tokens("gemini", 1000, 1000) == 1032
    assert image_tokens("openai", 1000, 1000) == 765
    assert image_tokens("hosted_vllm", 1000, 1000) == 765


def test_a_models_count_adds_its_images_to_the_text():
    image = check_image(png(1000, 1000))
    messages = [{"role": "system", "content": "s"}, user_message("look", [image])]
    text_only, sizes = split_images(messages)
    assert sizes == [(1000, 1000)]
    assert "image_url" not in str(text_only)
    claude = LiteLLMModel(ProviderSettings("anthropic/claude-sonnet-4-5"), None)
    gemini = LiteLLMModel(ProviderSettings("gemini/gemini-2.5-flash"), None)
    assert claude.count_tokens(messages) - claude.count_tokens(text_only) == 1334
    assert gemini.count_tokens(messages) - gemini.count_tokens(text_only) == 1032
