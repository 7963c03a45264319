"""A model that reads the image it receives: bar charts of known values drawn with Pillow, and a reader that
measures the bars of a PNG back into those values, so an answer is right only if the image arrived intact."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw

SCALE = 10
"""Pixels of bar height per unit."""


def bar_chart(values: list[int]) -> bytes:
    """A PNG of one black bar per value, each VALUE * SCALE pixels high, 40 px wide with 30 px between bars."""
    height = max(values) * SCALE + 20
    image = Image.new("RGB", (30 + 70 * len(values), height), "white")
    draw = ImageDraw.Draw(image)
    for index, value in enumerate(values):
        left = 30 + 70 * index
        draw.rectangle((left, height - value * SCALE, left + 39, height - 1), fill="black")
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def read_bars(data: bytes) -> list[int]:
    """The values of a chart `bar_chart` drew, measured from its pixels: each run of dark columns is a bar."""
    with Image.open(io.BytesIO(data)) as opened:
        gray = opened.convert("L")
    width, height = gray.size
    pixels = gray.load()
    dark = [sum(pixels[x, y] < 128 for y in range(height)) for x in range(width)]
    values, run = [], []
    for column in [*dark, 0]:
        if column:
            run.append(column)
        elif run:
            values.append(round(max(run) / SCALE))
            run = []
    return values


def answer_from(images: list[bytes]) -> str:
    """The reading model's reply: the sum of the bars of the last image it was sent, or that it saw none."""
    if not images:
        return "I cannot see any chart: <answer>unknown</answer>"
    return f"The bars are {read_bars(images[-1])}: <answer>{sum(read_bars(images[-1]))}</answer>"
