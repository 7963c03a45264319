"""A task's `solution`: a `python3` heredoc made of the reader's code and the lines that read the task's
figures from the converted Markdown and print the answer."""

from __future__ import annotations

import ast
from pathlib import Path

from .spec import Document, Task, Text

READER = Path(__file__).with_name("reader.py")


def reader_source(*functions: str) -> str:
    """The reader's imports and the named functions, one line after another, as the solutions carry them."""
    text = READER.read_text(encoding="utf-8")
    body = ast.parse(text).body
    defs = {node.name: node for node in body if isinstance(node, ast.FunctionDef)}
    nodes = [node for node in body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return "".join(f"{ast.get_source_segment(text, node)}\n" for node in [*nodes, *(defs[f] for f in functions)])


def python_script(code: str) -> str:
    return "python3 - <<'PY'\n" + code + "PY"


DOMAIN_READER = reader_source("tables", "num", "cell", "grab", "fmt")


def solution(task: Task, documents: dict[str, Document]) -> str:
    lines = []
    for ref in task.refs:
        if isinstance(ref, Text):
            lines.append(f"v.append(grab({ref.name!r}, {ref.pattern!r}))")
        else:
            doc = documents[ref.doc]
            comma = ", comma=True" if doc.comma else ""
            lines.append(f"v.append(cell({doc.name!r}, {ref.key!r}, {ref.col!r}{comma}))")
    body = "v = []\n" + "\n".join(lines) + f"\nprint(fmt({task.expr}, {task.answer_format!r}))\n"
    return python_script(DOMAIN_READER + body)


def evidence(task: Task, documents: dict[str, Document]) -> list[str]:
    """The documents the task reads, in the order of its first reference to each."""
    return list(dict.fromkeys(ref.name if isinstance(ref, Text) else documents[ref.doc].name for ref in task.refs))
