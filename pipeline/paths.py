"""Where the project's files are: the data folder (tokenizer, models, samples) and the shared corpora.

The data folder sits beside the packages in a checkout; `LDX_DATA_DIR` points elsewhere (an installed
package, a container with the models mounted). The shared corpora are not part of the repository:
`LDX_SHARED_DATA`, else `../shared/data` from the working directory (the layout the README describes).
Both are read once, at import.
"""

from __future__ import annotations

import os
from pathlib import Path

# The folder holding pipeline/, txl/, retrieval/ and flows/ (the checkout, for an editable install)
REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("LDX_DATA_DIR") or REPO_ROOT / "data")
MODELS_DIR = DATA_DIR / "models"
HEADS_DIR = MODELS_DIR / "heads"
SHIPPED_CHECKPOINT = MODELS_DIR / "txl_lm.pt"  # the language model, every model stage's default encoder
TOKENIZER_FILE = DATA_DIR / "tokenizer" / "tokenizer.json"
SHARED_DATA = Path(os.environ.get("LDX_SHARED_DATA") or "../shared/data")
