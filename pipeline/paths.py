"""Where the project's files are: the data folder (tokenizer, models, samples), the shared corpora, and
the per-user cache directory for what the project keeps outside OUT_DIR.

The data folder sits beside the packages in a checkout; `LDX_DATA_DIR` points elsewhere (an installed
package, a container with the models mounted). The shared corpora are not part of the repository:
`LDX_SHARED_DATA`, else `../shared/data` from the working directory (the layout the README describes).
Both are read once, at import. Caches go to one per-user directory, never the shared system temp
directory (where any user can plant or read a file of a known name).
"""

from __future__ import annotations

import os
from pathlib import Path

# The folder holding pipeline/, txl/, retrieval/ and flows/ (the checkout, for an editable install)
REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("LDX_DATA_DIR") or REPO_ROOT / "data")
MODELS_DIR = DATA_DIR / "models"
HEADS_DIR = MODELS_DIR / "heads"
CLAUSE_HEAD = HEADS_DIR / "clauses.npz"  # the contract clause head `ldx run` and `ldx ask` use
SHIPPED_CHECKPOINT = MODELS_DIR / "txl_lm.pt"  # the language model, every model stage's default encoder
TOKENIZER_FILE = DATA_DIR / "tokenizer" / "tokenizer.json"
SHARED_DATA = Path(os.environ.get("LDX_SHARED_DATA") or "../shared/data")
APP = "longdoc-xl"


def user_cache_dir(*parts: str) -> Path:
    """$XDG_CACHE_HOME/longdoc-xl/… (~/.cache/longdoc-xl/… by default), created private (0700)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    root = Path(base, APP)
    path = root.joinpath(*parts)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    # mkdir gives `mode` to the last directory only, and none to those that existed already
    for level in (root, *(root.joinpath(*parts[: i + 1]) for i in range(len(parts)))):
        if level.stat().st_mode & 0o077:
            level.chmod(0o700)
    return path
