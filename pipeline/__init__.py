"""pipeline: documents in — parsing into typed blocks, tokenization, segments. The core records live here."""

__version__ = "0.1.0"
