"""harness: evaluates LLM agents on archive-grounded document reasoning."""

import os

__version__ = "0.1.0"

# litellm otherwise downloads its model-price map at import; the bundled copy keeps start-up offline.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
