"""A domain's task table as task file rows: the gold answer from the figures as printed, the solution that
recomputes it inside the sandbox, and the evidence."""

from __future__ import annotations

import ast
from collections.abc import Callable
from decimal import Decimal
from typing import TypedDict

from .reader import fmt
from .solution import evidence, solution
from .spec import Domain, Ref, Text


class TaskRow(TypedDict):
    """A line of tasks/<domain>.jsonl."""

    id: str
    domain: str
    question: str
    answer: str
    answer_format: str
    solution: str
    evidence: list[str]


# an answer expression: arithmetic over the figures v[...], sum(...), D(...) and Decimal methods (.ln(), .exp())
_NODES = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.operator,
    ast.unaryop,
    ast.Subscript,
    ast.Slice,
    ast.Constant,
    ast.Name,
    ast.Load,
    ast.Call,
    ast.Attribute,
)
_FUNCTIONS: dict[str, object] = {"sum": sum, "D": Decimal}


def evaluate(expr: str, values: list[Decimal]) -> Decimal:
    tree = ast.parse(expr, mode="eval")
    for node in ast.walk(tree):
        if (
            not isinstance(node, _NODES)
            or (isinstance(node, ast.Name) and node.id != "v" and node.id not in _FUNCTIONS)
            or (isinstance(node, ast.Attribute) and node.attr.startswith("_"))
        ):
            raise ValueError(f"{expr!r}: {ast.unparse(node)!r} is not allowed in an answer expression")
    names = {"__builtins__": {}, **_FUNCTIONS, "v": values}
    return Decimal(eval(compile(tree, "<answer>", "eval"), names))


def task_rows(domain: Domain, value: Callable[[Ref | Text], Decimal]) -> list[TaskRow]:
    """`value` gives a reference's figure (the pipeline: as printed in the raw table)."""
    documents = domain.documents()
    rows: list[TaskRow] = []
    for index, task in enumerate(domain.tasks, start=1):
        if task.id != f"{domain.name}-{index:03d}":
            raise SystemExit(f"{domain.name}: task {index} has the id {task.id!r}")
        names = evidence(task, documents)
        if len(names) < 2:
            raise SystemExit(f"{task.id}: needs at least two documents")
        answer = fmt(evaluate(task.expr, [value(ref) for ref in task.refs]), task.answer_format)
        rows.append(
            {
                "id": task.id,
                "domain": domain.name,
                "question": task.question,
                "answer": answer,
                "answer_format": task.answer_format,
                "solution": solution(task, documents),
                "evidence": names,
            }
        )
    return rows
