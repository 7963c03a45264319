"""An image-reading model of our own: it answers `findocmre_set` questions by MEASURING the PNGs it is sent.

It never sees the generator's values: it finds each chart by the colour its axes are filled with (which encodes
the figure number), measures a bar as the rows of its series' colour in the bar's centre column, and reads a
trend from the green line. A wrong, missing or damaged image gives a wrong answer (or none), so a right answer
proves the right pixels arrived.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

import numpy as np
from PIL import Image

from tests.helpers.findocmre_set import COLOURS, COLOURS_ZH, FACE_BASE, FACE_STEP

_TOLERANCE = 40
"""A rendered edge blends the colour with its neighbour: a pixel this close still counts as the colour."""
_STEP = 5
"""Values are read to the nearest 5 (as a person reads a chart between its gridlines; the set's values are)."""
_BAR_EN = re.compile(r"bar (\d) of the (red|blue|green) series in Figure (\d)")
_BAR_ZH = re.compile(r"图(\d)中(红|蓝|绿)色系列第(\d)根柱")
_ZH_COLOUR = {text: name for name, text in COLOURS_ZH.items()}


@dataclass(frozen=True)
class Axes:
    pixels: np.ndarray
    """The image's RGB pixels, rows x columns x 3."""
    face: tuple[int, int, int]
    top: int
    bottom: int
    left: int
    right: int

    def rising(self, colour: str) -> bool:
        """The line's right end is higher (a smaller row) than its left end."""
        area = _matches(self.pixels[self.top : self.bottom + 1, self.left : self.right + 1], COLOURS[colour])
        rows, columns = np.nonzero(area)
        left, right = rows[columns == columns.min()].mean(), rows[columns == columns.max()].mean()
        return bool(right < left)

    def bars(self) -> int:
        """How many bars stand on the axes' floor: runs of other colours along its lowest row."""
        floor = ~_matches(self.pixels[self.bottom - 1, self.left : self.right + 1], self.face, 2)
        starts = np.flatnonzero(floor[1:] & ~floor[:-1]).size + int(floor[0])
        return max(starts, 1)

    def bar(self, colour: str, index: int) -> int | None:
        """The height of the series' segment in bar INDEX (1-based) on the axes' 0-100 scale."""
        column = self.left + round((index - 0.5) * (self.right - self.left + 1) / self.bars())
        strip = self.pixels[self.top : self.bottom + 1, column]
        rows = np.nonzero(_matches(strip, COLOURS[colour]))[0]
        if rows.size == 0:
            return None
        share = (rows.max() - rows.min() + 1) / (self.bottom - self.top + 1)
        return _STEP * round(100 * share / _STEP)


def _matches(pixels: np.ndarray, colour: tuple[int, int, int], tolerance: int = _TOLERANCE) -> np.ndarray:
    return np.all(np.abs(pixels.astype(int) - np.array(colour)) <= tolerance, axis=-1)


def find_charts(pngs: list[bytes]) -> dict[int, Axes]:
    """Figure number -> its axes, over every image (a page, a crop, a boxed page: wherever they are)."""
    found: dict[int, Axes] = {}
    for data in pngs:
        pixels = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
        wide = pixels.astype(np.int16)
        face = np.all(np.abs(wide[..., :2] - 236) <= 2, axis=-1)
        codes = np.rint((wide[..., 2] - FACE_BASE) / FACE_STEP).astype(int)
        near = face & (np.abs(wide[..., 2] - (FACE_BASE + FACE_STEP * codes)) <= 2) & (codes > 0)
        figures, counts = np.unique(codes[near], return_counts=True)
        for figure, count in zip(figures.tolist(), counts.tolist(), strict=True):
            if count < 200:
                continue
            rows, columns = np.nonzero(near & (codes == figure))
            face_colour = (236, 236, FACE_BASE + FACE_STEP * figure)
            found[figure] = Axes(
                pixels, face_colour, int(rows.min()), int(rows.max()), int(columns.min()), int(columns.max())
            )
    return found


def _bars(text: str) -> list[tuple[int, str, int]]:
    """(figure, colour, bar) of every bar the text names, in order."""
    named = [(int(f), c, int(b)) for b, c, f in _BAR_EN.findall(text)]
    return named + [(int(f), _ZH_COLOUR[c], int(b)) for f, c, b in _BAR_ZH.findall(text)]


def answer(question: str, pngs: list[bytes]) -> str:
    """The reply, `<answer>...</answer>` last, or a reply without an answer when the pictures do not show it."""
    charts = find_charts(pngs)
    body, _, options_text = question.partition("Options:") if "Options:" in question else question.partition("选项：")
    options = dict(re.findall(r"^([A-Z])\. (.+)$", options_text, re.MULTILINE))

    def height(figure: int, colour: str, index: int) -> int | None:
        axes = charts.get(figure)
        return None if axes is None else axes.bar(colour, index)

    named = _bars(body)
    if options and re.search(r"trend|趋势", body):
        axes = charts.get(int(re.search(r"Figure (\d)|图(\d)", body).group(0)[-1]))  # type: ignore[union-attr]
        if axes is None:
            return "I cannot see that chart."
        return f"<answer>{'A' if axes.rising('green') else 'B'}</answer>"
    if options and re.search(r"tallest|最高", body):
        figure = int(re.search(r"Figure (\d)|图(\d)", body).group(0)[-1])  # type: ignore[union-attr]
        heights = {letter: height(figure, "red", int(re.sub(r"\D", "", text))) for letter, text in options.items()}
        if None in heights.values():
            return "I cannot see that chart."
        return f"<answer>{max(heights, key=lambda k: heights[k] or 0)}</answer>"
    if options:
        threshold = int(re.search(r"(\d+)\D*$", body).group(1))  # type: ignore[union-attr]
        values = {letter: height(*_bars(text)[0]) for letter, text in options.items()}
        if None in values.values():
            return "I cannot see those charts."
        return "<answer>" + ", ".join(k for k, v in values.items() if v is not None and v > threshold) + "</answer>"
    measured = [height(*bar) for bar in named]
    if not measured or None in measured:
        return "I cannot see the chart the question is about."
    values = [v for v in measured if v is not None]
    if re.search(r"ratio|比值", body):
        return f"<answer>{values[0] / values[1]:.2f}</answer>"
    if len(values) == 1:
        return f"<answer>{values[0]}</answer>"
    return "<answer>" + "; ".join(f"{text}: {v}" for text, v in zip(_texts(body), values, strict=False)) + "</answer>"


def _texts(body: str) -> list[str]:
    return [m.group(0) for m in _BAR_EN.finditer(body)] + [m.group(0) for m in _BAR_ZH.finditer(body)]
