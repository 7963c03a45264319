"""Spreadsheet values as the spreadsheet displays them: `0.125` under `0.0%` is `12.5%`, `1234567` under
`#,##0` is `1,234,567`, dates are ISO. Covers the number formats reports use (decimals, thousands
separators, percent, scaling commas, currency and literal text, a negative section, scientific); anything
else falls back to the plain number."""

from __future__ import annotations

import datetime as dt
import re
from decimal import ROUND_HALF_UP, Decimal

_NUMERIC = re.compile(r"[#0?][#0?,]*(?:\.[#0?]*)?|\.[#0?]+")
_BRACKETS = re.compile(r"\[([^\]]*)\]")


def display(value: object, number_format: str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ") if value.time() != dt.time(0) else value.date().isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (int, float)):
        return _number(value, number_format or "General")
    return str(value)


def _general(value: float) -> str:
    """Excel's General: integers without `.0`, floats to 15 significant digits (no binary noise)."""
    if isinstance(value, int) or (value.is_integer() and abs(value) < 1e15):
        return str(int(value))
    text = format(value, ".15g")
    return text if "e" not in text else format(Decimal(text).normalize(), "f")


def _number(value: float, number_format: str) -> str:
    sections = _split_sections(number_format)
    section = sections[0]
    negative_section = value < 0 and len(sections) > 1
    if negative_section:
        section, value = sections[1], -value
    elif value == 0 and len(sections) > 2:
        section = sections[2]
    cleaned = _literal_free(section)
    if cleaned.strip().lower() in ("general", "", "@") or "/" in cleaned:
        return _general(value) if cleaned.strip() or not section.strip() else _render_literals(section, "\0", "")
    if "e+" in cleaned.lower() or "e-" in cleaned.lower():
        return _scientific(value, cleaned)
    match = _NUMERIC.search(cleaned)
    if not match:
        return _render_literals(section, "\0", "")
    pattern = match.group(0)
    number = Decimal(repr(float(value))) * (100 ** cleaned.count("%"))
    integer_part, _, fraction_part = pattern.partition(".")
    scaling = len(integer_part) - len(integer_part.rstrip(","))
    number /= Decimal(1000) ** scaling
    rendered = _fixed(number, fraction_part, "," in integer_part.rstrip(","))
    return _render_literals(section, pattern, rendered)


def _split_sections(number_format: str) -> list[str]:
    sections, current, quoted = [], "", False
    for char in number_format:
        if char == '"':
            quoted = not quoted
        if char == ";" and not quoted:
            sections.append(current)
            current = ""
        else:
            current += char
    return [*sections, current]


def _literal_free(section: str) -> str:
    """The section without quoted text, escapes, brackets, padding and fill, to find the number pattern."""
    section = re.sub(r'"[^"]*"', "", section)
    section = re.sub(r"\\.|_.|\*.", "", section)
    return _BRACKETS.sub("", section)


def _fixed(number: Decimal, fraction_pattern: str, grouping: bool) -> str:
    required = fraction_pattern.count("0")
    places = len(fraction_pattern)
    rounded = number.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    text = f"{rounded:,.{places}f}" if grouping else f"{rounded:.{places}f}"
    if places > required:  # optional digits (# or ?) drop their trailing zeros
        whole, _, fraction = text.partition(".")
        fraction = fraction[:required] + fraction[required:].rstrip("0")
        text = f"{whole}.{fraction}" if fraction else whole
    return text[1:] if text.startswith("-") and not rounded else text


def _scientific(value: float, cleaned: str) -> str:
    mantissa = cleaned.lower().split("e")[0]
    places = len(mantissa.partition(".")[2])
    return f"{value:.{places}E}"


def _render_literals(section: str, pattern: str, rendered: str) -> str:
    """The section's literal text around the number: `"$"#,##0` -> `$1,234`, `0.0 "kg"` -> `1.5 kg`."""
    out, index, placed = [], 0, False
    while index < len(section):
        char = section[index]
        if char == '"':
            end = section.find('"', index + 1)
            end = len(section) if end < 0 else end
            out.append(section[index + 1 : end])
            index = end + 1
        elif char == "\\" and index + 1 < len(section):
            out.append(section[index + 1])
            index += 2
        elif char in "_*" and index + 1 < len(section):
            out.append(" " if char == "_" else "")
            index += 2
        elif char == "[":
            end = section.find("]", index)
            end = len(section) if end < 0 else end
            out.append(_bracket_literal(section[index + 1 : end]))
            index = end + 1
        elif not placed and section.startswith(pattern, index):
            out.append(rendered)
            index += len(pattern)
            placed = True
        elif char in "#0?,." and placed:
            index += 1
        else:
            out.append(char)
            index += 1
    return "".join(out).strip()


def _bracket_literal(content: str) -> str:
    """`[$€-407]` is a currency symbol; colours (`[Red]`) and conditions (`[<1000]`) show nothing."""
    if content.startswith("$"):
        return content[1:].split("-")[0]
    return ""
