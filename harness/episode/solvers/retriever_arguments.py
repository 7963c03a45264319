"""The retrieval a solver is given by its arguments (`--solver-arg retriever=local|openai`, the chunking), shared by
the solvers that retrieve (the RAG baseline, the workflow), and what each back end needs before a run starts."""

from __future__ import annotations

import os
from collections.abc import Mapping

from harness.core.errors import InputError
from harness.core.extras import require_extra
from harness.episode.solvers.base import SolverArgumentError
from harness.inputs.retrieval.backends import make_retriever
from harness.inputs.retrieval.base import RETRIEVERS, Retriever
from harness.inputs.retrieval.chunks import chunk_settings

RETRIEVER_ARGUMENTS: Mapping[str, str] = {
    "retriever": "local (BM25, no key; the default) or openai (File Search, OPENAI_API_KEY)",
    "chunk_tokens": "tokens a chunk holds (default 800, OpenAI's)",
    "chunk_overlap": "tokens a chunk shares with the next (default 400, OpenAI's)",
    "api_base": "File Search's API base (default OpenAI's)",
    "keep_store": "true: keep File Search's vector stores for the next run (default: deleted at the run's end)",
}


def retriever_of(args: Mapping[str, str]) -> Retriever:
    """The back end and chunking ARGS name; a bad one is the solver's argument error."""
    try:
        chunking = chunk_settings(args)
    except ValueError as error:
        raise SolverArgumentError(str(error)) from None
    kind = args.get("retriever", "local")
    if kind not in RETRIEVERS:
        raise SolverArgumentError(f"retriever={kind!r}: one of {', '.join(RETRIEVERS)}")
    keep = args.get("keep_store", "false")
    if keep not in ("true", "false"):
        raise SolverArgumentError(f"keep_store={keep!r}: true or false")
    retriever = make_retriever(kind, chunking, args.get("api_base"))
    retriever.keep_after_run = keep == "true"
    return retriever


def check_retriever(retriever: Retriever, solver: str) -> None:
    """Before the run: the local back end's extra is installed, File Search has its key."""
    if retriever.name == "local":
        require_extra("retrieval", f"--solver {solver}")
    elif not os.environ.get("OPENAI_API_KEY"):
        raise InputError(f"--solver {solver}: retriever=openai needs OPENAI_API_KEY (File Search's key)")
