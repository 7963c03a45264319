"""harness: evaluates LLM agents on archive-grounded document reasoning."""

import os

__all__ = [
    "__version__",
    "analysis",
    "core",
    "diagnostics",
    "episode",
    "grading",
    "inputs",
    "interop",
    "models",
    "records",
    "run",
    "sandboxes",
]


__version__ = "0.1.0"

# litellm otherwise downloads its model-price map at import; the bundled copy keeps start-up offline.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
