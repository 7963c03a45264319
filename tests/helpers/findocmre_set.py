"""A generated FinDocMRE-shaped set: financial reports whose answers live only in chart pixels.

Each report is a small PDF: a cover page of prose, then one chart per page drawn with matplotlib and embedded as
a PNG (so the PDF's text layer holds the captions, never the values). The charts are bars of known integer heights
(red), a stacked series (red under blue), and a trend line (green) over bars, each with a legend below its axes.
Every chart's axes are filled with a colour that encodes its figure number (`FACE_BASE`), so a reader of the
pixels (`findocmre_reader.py`) can tell the charts apart. The items cover the five answer types, questions over one,
two and three charts, in English and Chinese.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymupdf
from matplotlib.figure import Figure

COLOURS = {"red": (204, 0, 0), "blue": (0, 0, 204), "green": (0, 153, 0)}
COLOURS_ZH = {"red": "红", "blue": "蓝", "green": "绿"}
FACE_BASE = 150
FACE_STEP = 8
"""A chart's axes are filled with (236, 236, FACE_BASE + FACE_STEP * figure): its figure number in its pixels."""
CHART_INCHES = (4.0, 3.0)
CHART_DPI = 100
PAGE_POINTS = (360.0, 300.0)
CHART_AT = (36.0, 60.0)
"""The chart's top-left corner on its page, in points (the caption is above it)."""


@dataclass(frozen=True)
class Chart:
    figure: int
    kind: str
    """`bars` (red), `stacked` (red under blue) or `trend` (red bars under a green line)."""
    red: tuple[int, ...]
    blue: tuple[int, ...] = ()
    green: tuple[int, ...] = ()

    @property
    def id(self) -> str:
        return f"fig{self.figure}"


@dataclass(frozen=True)
class Report:
    stem: str
    language: str
    company: str
    charts: tuple[Chart, ...]


REPORTS = (
    Report(
        "acme-2024",
        "en",
        "Acme Holdings",
        (
            Chart(1, "bars", (40, 65, 30, 80)),
            Chart(2, "stacked", (25, 35, 20), blue=(30, 20, 45)),
            Chart(3, "trend", (50, 20, 70, 35), green=(20, 35, 55, 75)),
        ),
    ),
    Report(
        "huaxia-2023",
        "zh",
        "华夏银行",
        (
            Chart(1, "bars", (55, 15, 75, 45)),
            Chart(2, "stacked", (30, 10, 40), blue=(20, 50, 25)),
            Chart(3, "trend", (60, 35, 25, 45), green=(80, 60, 45, 30)),
        ),
    ),
)


def chart_png(chart: Chart) -> bytes:
    """The chart as PNG: no antialiasing on bars and lines, so their colours are exact in the pixels."""
    figure = Figure(figsize=CHART_INCHES, dpi=CHART_DPI)
    axes = figure.add_axes((0.12, 0.28, 0.83, 0.62))
    axes.set_facecolor(tuple(v / 255 for v in face_colour(chart.figure)))
    positions = range(len(chart.red))
    rgb = {name: tuple(v / 255 for v in colour) for name, colour in COLOURS.items()}
    axes.bar(positions, chart.red, width=0.6, color=rgb["red"], antialiased=False, label="segment A")
    if chart.blue:
        axes.bar(positions, chart.blue, 0.6, bottom=chart.red, color=rgb["blue"], antialiased=False, label="segment B")
    if chart.green:
        axes.plot(positions, chart.green, color=rgb["green"], linewidth=3, antialiased=False, label="trend")
    axes.set_ylim(0, 100)
    axes.set_xlim(-0.5, len(chart.red) - 0.5)
    for spine in axes.spines.values():
        spine.set_visible(False)
    axes.set_xticks(list(positions), [f"Q{n + 1}" for n in positions])
    axes.set_title(f"Figure {chart.figure}")
    figure.legend(loc="lower center", ncols=3, frameon=False)
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=CHART_DPI)
    return out.getvalue()


def face_colour(figure: int) -> tuple[int, int, int]:
    return 236, 236, FACE_BASE + FACE_STEP * figure


def chart_box() -> tuple[float, float, float, float]:
    """Where each chart sits on its page, in points from the top left."""
    x, y = CHART_AT
    return x, y, x + 72 * CHART_INCHES[0], y + 72 * CHART_INCHES[1]


def report_pdf(report: Report, path: Path) -> None:
    """Cover page of prose, then one chart per page under its caption: no value is in the text layer."""
    document = pymupdf.open()
    font = "china-s" if report.language == "zh" else "helv"
    cover = document.new_page(width=PAGE_POINTS[0], height=PAGE_POINTS[1])
    prose = (
        f"{report.company} 年度报告。本报告的图表展示各季度业务数据。"
        if report.language == "zh"
        else f"{report.company} annual report. The charts that follow show each quarter's business."
    )
    cover.insert_textbox(pymupdf.Rect(36, 36, 324, 200), prose, fontname=font, fontsize=11)
    for chart in report.charts:
        page = document.new_page(width=PAGE_POINTS[0], height=PAGE_POINTS[1])
        caption = (
            f"图 {chart.figure}：季度业务" if report.language == "zh" else f"Figure {chart.figure}: quarterly business"
        )
        page.insert_text((36, 40), caption, fontname=font, fontsize=11)
        page.insert_image(pymupdf.Rect(*chart_box()), stream=chart_png(chart))
    document.save(path)
    document.close()


def _bar(chart: Chart, colour: str, index: int, language: str) -> str:
    if language == "zh":
        return f"图{chart.figure}中{COLOURS_ZH[colour]}色系列第{index}根柱"
    return f"bar {index} of the {colour} series in Figure {chart.figure}"


def items(report: Report) -> list[dict[str, Any]]:
    """The five types over this report's charts: one-chart, two-chart and three-chart questions."""
    zh = report.language == "zh"
    bars, stacked, trend = report.charts

    def item(suffix: str, kind: str, question: str, answer: Any, charts: tuple[Chart, ...], **extra: Any) -> dict:
        return {
            "id": f"{report.stem}-{suffix}",
            "question": question,
            "answer": answer,
            "question_type": kind,
            "financial_domain": "banking" if zh else "industrials",
            "reasoning_type": extra.pop("reasoning", "numerical"),
            "chart_ids": [chart.id for chart in charts],
            "language": report.language,
            "source_document": report.stem,
            "charts": [{"id": c.id, "page": c.figure + 1, "bbox": list(chart_box())} for c in report.charts],
            **extra,
        }

    def value(chart: Chart, colour: str, index: int) -> int:
        return int(getattr(chart, colour)[index - 1])

    tallest = max(range(len(bars.red)), key=lambda n: bars.red[n]) + 1
    one = _bar(bars, "red", 2, report.language)
    two = (_bar(bars, "red", 1, report.language), _bar(stacked, "blue", 3, report.language))
    ratio = round(value(bars, "red", 1) / value(stacked, "blue", 3), 2)
    options = [_bar(bars, "red", 1, report.language), _bar(stacked, "blue", 2, report.language)]
    options += [_bar(stacked, "red", 3, report.language), _bar(bars, "red", 4, report.language)]
    truth = [value(bars, "red", 1), value(stacked, "blue", 2), value(stacked, "red", 3), value(bars, "red", 4)]
    above = [letter for letter, v in zip("ABCD", truth, strict=True) if v > 40]
    firsts = [_bar(chart, "red", 1, report.language) for chart in report.charts]
    summary = "; ".join(f"{text}: {chart.red[0]}" for text, chart in zip(firsts, report.charts, strict=True))
    return [
        item(
            "exact",
            "numeric_exact",
            f"{one}的数值是多少？" if zh else f"What is the value of {one}?",
            value(bars, "red", 2),
            (bars,),
        ),
        item(
            "ratio",
            "numeric_approx",
            f"{two[0]}与{two[1]}的比值是多少？" if zh else f"What is the ratio of {two[0]} to {two[1]}?",
            ratio,
            (bars, stacked),
        ),
        item(
            "tallest",
            "single_choice",
            f"图{bars.figure}中红色系列哪一根柱最高？"
            if zh
            else f"Which bar of the red series in Figure {bars.figure} is the tallest?",
            "ABCD"[tallest - 1],
            (bars,),
            options=[f"第{n}根柱" if zh else f"bar {n}" for n in range(1, 5)],
            reasoning="comparison",
        ),
        item(
            "trend",
            "single_choice",
            f"图{trend.figure}中绿色趋势线总体是上升还是下降？"
            if zh
            else f"Is the green trend line in Figure {trend.figure} rising or falling overall?",
            "A" if trend.green[-1] > trend.green[0] else "B",
            (trend,),
            options=["上升", "下降"] if zh else ["rising", "falling"],
            reasoning="trend",
        ),
        item(
            "above",
            "multiple_choice",
            "以下哪些柱的数值高于40？" if zh else "Which of these bars are above 40?",
            above,
            (bars, stacked),
            options=options,
            reasoning="comparison",
        ),
        item(
            "summary",
            "open_ended",
            ("列出" + "、".join(firsts) + "的数值。") if zh else "Give the values of " + ", ".join(firsts) + ".",
            summary,
            report.charts,
            reasoning="synthesis",
        ),
    ]


def write_set(folder: Path) -> tuple[Path, Path]:
    """The PDFs in FOLDER/pdfs and the items in FOLDER/findocmre.jsonl."""
    pdfs = folder / "pdfs"
    pdfs.mkdir(parents=True, exist_ok=True)
    lines = []
    for report in REPORTS:
        report_pdf(report, pdfs / f"{report.stem}.pdf")
        lines += [json.dumps(row, ensure_ascii=False) for row in items(report)]
    data = folder / "findocmre.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data, pdfs
