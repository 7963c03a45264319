"""The `multi_choice` grader: the gold is a set of option letters (docs/GRADERS.md §1)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from harness.grading.answer import find_answer_tag
from harness.grading.gold import GoldSpec
from harness.grading.numeric import GoldAnswerError
from harness.grading.record import Grade, Verdict

GRADER_VERSION = "multi_choice-1.0"
MAX_CONTENT_CHARS = 256
# Separators people write between letters: commas (ASCII, full-width, ideographic), semicolons, `&`, `+`, `/`, `和`.
_SEPARATORS = re.compile(r"[,，、;；&+/和与及]")
_LABEL = re.compile(r"^(?:answers?|options?|choices?)\s*[:：]?\s*", re.IGNORECASE)
_BRACKETED = re.compile(r"^(?:[(\[（][A-Za-z][)\]）])+$")
_RANGE = re.compile(r"\b([A-Z])\s*[-–]\s*([A-Z])\b")
_GOLD = re.compile(r"^[A-Z](?:(, |,|&|)[A-Z])*$")


@dataclass(frozen=True)
class _MultiChoiceGold:
    letters: frozenset[str]
    text: str
    """The gold as written: the strict form."""
    options: frozenset[str]


def _parse_gold_multi(gold: GoldSpec) -> _MultiChoiceGold:
    """The gold is the letters in order, joined by one of ``, `, `, `&` or nothing; the format may name `A-E`."""
    text = gold.answer.strip()
    match = _GOLD.match(text)
    letters = re.findall(r"[A-Z]", text)
    if match is None or len(set(re.split(r"[A-Z]", text)[1:-1])) > 1:
        raise GoldAnswerError(f"{gold.answer!r} is not option letters joined by ', ', ',', '&' or nothing")
    if letters != sorted(set(letters)):
        raise GoldAnswerError(f"{gold.answer!r}: letters must be distinct and in alphabetical order")
    options = _options(gold.answer_format)
    outside = sorted(set(letters) - options)
    if outside:
        raise GoldAnswerError(f"{gold.answer!r}: letter {outside[0]} is not among the options of the answer_format")
    return _MultiChoiceGold(frozenset(letters), text, options)


def _options(answer_format: str | None) -> frozenset[str]:
    """`A-E` in the answer_format bounds the options; without it every letter A-Z is one."""
    match = _RANGE.search(answer_format or "")
    first, last = (match.group(1), match.group(2)) if match else ("A", "Z")
    return frozenset(chr(code) for code in range(ord(first), ord(last) + 1))


def _read_letters(content: str) -> list[str] | str:
    """The letters of an answer tag's content, or the UNPARSEABLE reason code.

    Only letters standing alone (`A, C`, `A&C`, `A 和 C`), in brackets (`(A)(C)`) or run together in
    capitals (`AC`) count; a word (`Both`, `ace`) makes the answer unparseable: prose is never scanned.
    """
    if len(content) > MAX_CONTENT_CHARS:
        return "TOO_LONG"
    text = unicodedata.normalize("NFKC", content).strip().strip("*_`").strip().rstrip(".")
    text = _LABEL.sub("", text)
    letters: list[str] = []
    for piece in _SEPARATORS.sub(" ", text).split():
        if piece.lower() in ("and", "or"):
            if piece.lower() == "or":
                return "ALTERNATIVES"
            continue
        if _BRACKETED.match(piece):
            letters += [ch.upper() for ch in piece if ch.isalpha()]
        elif len(piece) == 1 and piece.isascii() and piece.isalpha():
            letters.append(piece.upper())
        elif piece.isascii() and piece.isalpha() and piece.isupper():
            letters += list(piece)
        else:
            return "NO_OPTION"
    return letters or "NO_OPTION"


class MultiChoiceGrader:
    """One or more option letters; order and separator are free but for `strict`."""

    name = "multi_choice"
    version = GRADER_VERSION

    def validate(self, gold: GoldSpec) -> None:
        _parse_gold_multi(gold)

    def grade(self, submission: str | None, gold: GoldSpec) -> Grade:
        expected = _parse_gold_multi(gold)
        tag = find_answer_tag(submission or "")
        if tag.reason is not None:
            return Grade.uniform(Verdict.NO_ANSWER, [tag.reason], tag.content, GRADER_VERSION)
        content = tag.content or ""
        letters = _read_letters(content)
        if isinstance(letters, str):
            return Grade.uniform(Verdict.UNPARSEABLE, [letters], content, GRADER_VERSION)
        if not set(letters) <= expected.options:
            return Grade.uniform(Verdict.UNPARSEABLE, ["INVALID_OPTION"], content, GRADER_VERSION)
        parsed = ",".join(sorted(set(letters)))
        if set(letters) != expected.letters:
            return Grade(
                Verdict.WRONG_VALUE, Verdict.WRONG_VALUE, Verdict.WRONG_VALUE, [], content, parsed, None, GRADER_VERSION
            )
        reasons = [] if content.strip() == expected.text else ["FORMAT"]
        if len(letters) != len(set(letters)):
            reasons.append("DUPLICATE")
        strict = Verdict.FORMAT_VIOLATION if reasons else Verdict.CORRECT
        return Grade(Verdict.CORRECT, strict, Verdict.CORRECT, reasons, content, parsed, None, GRADER_VERSION)
