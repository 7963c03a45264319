"""harness: evaluates LLM agents on archive-grounded document reasoning."""

__version__ = "0.1.0"
