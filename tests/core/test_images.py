"""Untrusted image bytes: each kind of bad file is refused with a message for the agent, never a crash of ours."""

from __future__ import annotations

import pytest
from PIL import Image

from harness.core.images import ImageLimits, ImageRefused, check_image, image_of_part, image_part, user_message
from tests.helpers.images import animated_gif_as_webp, encoded, png, png_claiming


def test_a_png_passes_with_its_reference():
    data = png(40, 30)
    checked = check_image(data)
    assert (checked.ref.media_type, checked.ref.width, checked.ref.height, checked.ref.bytes) == (
        "image/png",
        40,
        30,
        len(data),
    )
    assert checked.data == data
    assert len(checked.ref.sha256) == 64


@pytest.mark.parametrize(("image_format", "media_type"), [("JPEG", "image/jpeg"), ("WEBP", "image/webp")])
def test_jpeg_and_webp_pass(image_format, media_type):
    assert check_image(encoded(Image.new("RGB", (9, 9), "blue"), image_format)).ref.media_type == media_type


def test_a_gif_is_refused_naming_the_accepted_formats():
    with pytest.raises(ImageRefused, match=r"accepted format \(PNG, JPEG, WEBP\)"):
        check_image(encoded(Image.new("RGB", (9, 9)), "GIF"))


def test_an_oversized_file_is_refused_before_it_is_decoded():
    with pytest.raises(ImageRefused, match="over the limit of 100 bytes per image"):
        check_image(png(200, 200, "white") + b"\x00" * 200, ImageLimits(max_bytes=100))


def test_a_side_over_the_limit_is_refused():
    with pytest.raises(ImageRefused, match="50x10 pixels, over the limit of 40 pixels a side"):
        check_image(png(50, 10), ImageLimits(max_side=40))


def test_a_decompression_bomb_is_refused_from_its_header():
    bomb = png_claiming(60_000, 60_000)
    assert len(bomb) < 200
    with pytest.raises(ImageRefused, match="decompression bomb"):
        check_image(bomb)


def test_pixels_over_the_limit_are_refused():
    with pytest.raises(ImageRefused, match="7000x7000 = 49,000,000 pixels, over the limit of 25,000,000"):
        check_image(png_claiming(7000, 7000))


@pytest.mark.parametrize(
    "data",
    [b"not an image at all", b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, png(64, 64)[:-30], png_claiming(300, 300)],
    ids=["text", "png-signature-only", "truncated", "short-pixel-data"],
)
def test_a_malformed_file_is_refused(data):
    with pytest.raises(ImageRefused):
        check_image(data)


def test_an_empty_file_is_refused():
    with pytest.raises(ImageRefused, match="empty"):
        check_image(b"")


def test_an_animated_image_is_refused():
    with pytest.raises(ImageRefused, match="animated"):
        check_image(animated_gif_as_webp())


def test_a_part_gives_its_image_back():
    checked = check_image(png(5, 6))
    assert image_of_part(image_part(checked)) == checked
    assert image_of_part({"type": "text", "text": "x"}) is None
    assert user_message("hi", []) == {"role": "user", "content": "hi"}
    assert user_message("hi", [checked])["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
