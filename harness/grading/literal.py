"""Parse an answer's text into one number and its unit (docs/GRADING.md §2.3 and §2.4).

Pure functions, `Decimal` only, and regexes without nested quantifiers so every match runs in
linear time on the (at most 256-character) input.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

MAX_CONTENT_CHARS = 256
_MAX_DIGITS = 40
_MAX_EXPONENT = 1000
"""The largest exponent (`e`-notation) read: far past any real answer, and far inside what `Decimal`'s default
context computes with (its exponents end at ±999999: `1e999999` overflowed the comparison, `1e99999999` before)."""

_SCALES: dict[str, Decimal] = {
    "thousand": Decimal(10) ** 3,
    "million": Decimal(10) ** 6,
    "billion": Decimal(10) ** 9,
    "trillion": Decimal(10) ** 12,
}
_UNIT_ALIASES = {
    "percent": "%",
    "pct": "%",
    "p.p.": "pp",
    "p.p": "pp",
    "percentagepoint": "pp",
    "percentagepoints": "pp",
    "×": "x",
    "times": "x",
    "thousand": "thousand",
    "k": "thousand",
    "m": "million",
    "mn": "million",
    "million": "million",
    "b": "billion",
    "bn": "billion",
    "billion": "billion",
    "t": "trillion",
    "tn": "trillion",
    "trillion": "trillion",
    "years": "year",
    "yr": "year",
    "yrs": "year",
    "months": "month",
    "days": "day",
    "quarters": "quarter",
}
# Units we recognise as units (so a wrong one is UNIT_MISMATCH, not EXTRA_TEXT).
_KNOWN_UNIT_PARTS = {"%", "pp", "x", "year", "month", "day", "quarter", "bp", *_SCALES}
_CURRENCIES = {"$": "usd", "€": "eur", "£": "gbp", "¥": "jpy", "usd": "usd", "eur": "eur", "gbp": "gbp"}
_HEDGES = ("approximately", "approx.", "about", "around", "roughly", "answer:", "~", "≈", "=")

_LITERAL = re.compile(r"[0-9]+(?:[.,][0-9]+)*(?:e[-+]?[0-9]+)?")
_NON_FINITE = re.compile(r"(?<![a-z])(?:nan|inf|infinity)(?![a-z])|∞")
_SIGN_DASH = re.compile(r"(?<![^\s($])[\u2012\u2013](?=[0-9])")
_LATEX_WRAPPER = re.compile(r"\\(?:boxed|text|mathrm)\{([^{}]*)\}")
_UNIT_WORD_BREAK = re.compile(r"[\s/]+")
_CURRENCY_WORD = re.compile(r"(?<![a-z])(?:usd|eur|gbp)(?![a-z])")
_SEPARATOR_READINGS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$"), "us_grouping"),
    (re.compile(r"^\d+(?:\.\d+)?$"), "plain"),
    (re.compile(r"^\d+(?:\.\d+)?e[-+]?\d+$"), "scientific"),
    (re.compile(r"^\d{1,3}(?:\.\d{3})+(?:,\d+)?$|^\d+,\d+$"), "decimal_comma"),
)


class Unparseable(Exception):
    """The text holds no single usable number; `code` is the UNPARSEABLE reason."""

    def __init__(self, code: str):
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class ParsedNumber:
    """One number read from an answer: signed value, its decimals, unit and format flags."""

    value: Decimal
    decimals: int
    unit: str  # normalised, "" when none
    currency: str | None
    explicit_plus: bool
    flags: frozenset[str] = field(default_factory=frozenset)
    unit_text: str = ""
    """The unit as written (canonicalised, before normalising): `t co2` where `unit` is `tco2`."""

    @property
    def ulp(self) -> Decimal:
        return Decimal(1).scaleb(-self.decimals)

    @property
    def scale(self) -> Decimal | None:
        return _SCALES.get(self.unit)

    @property
    def unit_words_with_digits(self) -> list[str]:
        """Words of the written unit that hold digits (`co2`, `m2`): in an answer they are no number."""
        return [word for word in _UNIT_WORD_BREAK.split(self.unit_text) if any(ch.isdigit() for ch in word)]


def _canonicalize(text: str) -> str:
    """The superficial layer: Unicode, minus signs, LaTeX, wrappers, whitespace and case."""
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("\u2212", "-").replace("\ufe63", "-")
    text = _SIGN_DASH.sub("-", text)
    text = _unwrap_latex(text)
    previous = None
    while previous != text:
        previous = text
        text = text.strip().strip("*_`")
        if text.endswith("."):
            text = text[:-1]
    return " ".join(text.split()).lower()


def _unwrap_latex(text: str) -> str:
    previous = None
    while previous != text:
        previous = text
        text = _LATEX_WRAPPER.sub(r"\1", text)
    stripped = text.strip()
    if len(stripped) >= 2 and stripped[0] == "$" and stripped[-1] == "$" and stripped[-2] != "\\":
        text = stripped[1:-1]
    return text.replace("\\%", "%").replace("\\times", "×").replace("\\$", "$")


def _normalize_unit(text: str) -> str:
    """Lower-case, ` per ` to `/`, no spaces, aliases applied to each `/`-separated part."""
    text = text.lower().replace(" per ", "/")
    text = "".join(text.split())
    return "/".join(_UNIT_ALIASES.get(part, part) for part in text.split("/"))


def parse_number(content: str, gold: ParsedNumber | None = None) -> ParsedNumber:
    """Read exactly one number, with sign, currency, hedges and unit, from an answer tag's content.

    `gold` is None when parsing the gold itself, whose suffix defines the unit. Raises `Unparseable`
    when there is not exactly one finite number of sane length.
    """
    if len(content) > MAX_CONTENT_CHARS:
        raise Unparseable("TOO_LONG")
    text = _canonicalize(content)
    searchable = text
    for word in gold.unit_words_with_digits if gold else []:  # docs/GRADING.md §2.4.1: the unit's digits
        searchable = searchable.replace(word, " " * len(word))
    if _NON_FINITE.search(searchable):
        raise Unparseable("NON_FINITE")
    literals = list(_LITERAL.finditer(searchable))
    if gold is None:  # the gold names its own unit, which may hold digits (`co2`, `m2`)
        literals = [m for m in literals if m.start() == 0 or not searchable[m.start() - 1].isalpha()]
    if not literals:
        raise Unparseable("NO_NUMBER")
    if len(literals) > 1:
        raise Unparseable("MULTIPLE_NUMBERS")
    literal = literals[0]
    if sum(ch.isdigit() for ch in literal.group()) > _MAX_DIGITS:
        raise Unparseable("TOO_LONG")
    magnitude, flags = _read_literal(literal.group())
    prefix, suffix = text[: literal.start()], text[literal.end() :]
    negative, explicit_plus, prefix, suffix, sign_flags = _read_sign(prefix, suffix)
    flags |= sign_flags
    currency, prefix, suffix = _take_currency(prefix, suffix)
    if currency and gold and gold.currency and currency != gold.currency:
        flags.add("UNIT_MISMATCH")
    flags |= _prefix_flags(prefix)
    unit = _normalize_unit(suffix)
    if gold is not None and unit and unit != gold.unit and not _is_known_unit(unit):
        flags.add("EXTRA_TEXT")
    decimals = -magnitude.as_tuple().exponent  # type: ignore[operator]
    value = -magnitude if negative else magnitude
    return ParsedNumber(value, decimals, unit, currency, explicit_plus, frozenset(flags), suffix)


def _read_literal(literal: str) -> tuple[Decimal, set[str]]:
    reading = next((name for pattern, name in _SEPARATOR_READINGS if pattern.match(literal)), None)
    if reading is None:
        raise Unparseable("BAD_NUMBER")
    if reading == "scientific" and abs(int(literal.partition("e")[2])) > _MAX_EXPONENT:
        raise Unparseable("OUT_OF_RANGE")
    flags: set[str] = set()
    if reading == "us_grouping":
        literal = literal.replace(",", "")
    elif reading == "scientific":
        flags.add("NOTATION")
    elif reading == "decimal_comma":
        literal = literal.replace(".", "").replace(",", ".")
        flags.add("DECIMAL_COMMA")
    try:
        return Decimal(literal), flags
    except InvalidOperation as error:  # pragma: no cover - the patterns above admit only valid literals
        raise Unparseable("BAD_NUMBER") from error


def _read_sign(prefix: str, suffix: str) -> tuple[bool, bool, str, str, set[str]]:
    """Parentheses, then a `-`/`+` right before the number (a currency symbol may sit either side).

    `(`...`)` around the number, with or without its unit (`(18.03) pp`, `(18.03 pp)`), is negative;
    what follows the `)` is read as the unit like any suffix.
    """
    flags: set[str] = set()
    negative = explicit_plus = False
    core = prefix.rstrip()
    if core.endswith("(") or core.endswith("($"):
        closing = suffix.find(")")
        if closing != -1:
            negative = True
            flags.add("SIGN_STYLE")
            cut = core.rfind("(")
            prefix = core[:cut] + core[cut + 1 :]
            suffix = suffix[:closing] + suffix[closing + 1 :]
    core = prefix.rstrip()
    for symbol in ("", *[s for s in _CURRENCIES if len(s) == 1]):
        if symbol and not core.endswith(symbol):
            continue
        body = core[: len(core) - len(symbol)].rstrip() if symbol else core
        if body.endswith(("-", "+")):
            negative = negative != body.endswith("-")
            explicit_plus = body.endswith("+")
            prefix = body[:-1] + symbol
            break
    return negative, explicit_plus, prefix, suffix, flags


def _take_currency(prefix: str, suffix: str) -> tuple[str | None, str, str]:
    found: str | None = None
    parts = []
    for text in (prefix, suffix):
        for symbol in ("$", "€", "£", "¥"):
            if symbol in text:
                found = _CURRENCIES[symbol]
                text = text.replace(symbol, " ")
        word = _CURRENCY_WORD.search(text)
        if word:
            found = _CURRENCIES[word.group()]
            text = _CURRENCY_WORD.sub(" ", text)
        parts.append(text.strip())
    return found, parts[0], parts[1]


def _prefix_flags(prefix: str) -> set[str]:
    rest = prefix.strip()
    hedged = False
    while rest:
        for hedge in _HEDGES:
            if rest.startswith(hedge):
                rest = rest[len(hedge) :].strip()
                hedged = True
                break
        else:
            return {"EXTRA_TEXT", "HEDGE"} if hedged else {"EXTRA_TEXT"}
    return {"HEDGE"} if hedged else set()


def _is_known_unit(unit: str) -> bool:
    return all(part in _KNOWN_UNIT_PARTS for part in unit.split("/"))
