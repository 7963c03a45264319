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
from harness.inputs.retrieval.embeddings import KEY_VARIABLES

RETRIEVER_ARGUMENTS: Mapping[str, str] = {
    "retriever": "local (BM25, no key; the default), openai (File Search, OPENAI_API_KEY) or embeddings (cosine of"
    " an OpenAI-compatible endpoint's embeddings: embedding_model, api_base)",
    "embedding_model": "with retriever=embeddings: the endpoint's embedding model (e.g. text-embedding-3-small)",
    "chunk_tokens": "tokens a chunk holds (default 800, OpenAI's)",
    "chunk_overlap": "tokens a chunk shares with the next (default 400, OpenAI's)",
    "api_base": "File Search's or the embeddings endpoint's API base (default OpenAI's)",
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
    try:
        retriever = make_retriever(kind, chunking, args.get("api_base"), args.get("embedding_model"))
    except ValueError as error:
        raise SolverArgumentError(str(error)) from None
    retriever.keep_after_run = keep == "true"
    return retriever


def check_retriever(retriever: Retriever, solver: str) -> None:
    """Before the run: the local back ends' extra is installed, OpenAI's services have their key."""
    if retriever.name in ("local", "embeddings"):
        require_extra("retrieval", f"--solver {solver}")
    if retriever.name == "openai" and not os.environ.get("OPENAI_API_KEY"):
        raise InputError(f"--solver {solver}: retriever=openai needs OPENAI_API_KEY (File Search's key)")
    at_openai = retriever.name == "embeddings" and not getattr(retriever, "api_base", None)
    if at_openai and not any(os.environ.get(name) for name in KEY_VARIABLES):
        raise InputError(
            f"--solver {solver}: retriever=embeddings at OpenAI needs EMBEDDINGS_API_KEY or OPENAI_API_KEY"
        )
