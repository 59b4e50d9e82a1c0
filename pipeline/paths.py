"""Where the project keeps files of its own outside OUT_DIR: one per-user cache directory, never the
shared system temp directory (where any user can plant or read a file of a known name)."""

from __future__ import annotations

import os
from pathlib import Path

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
