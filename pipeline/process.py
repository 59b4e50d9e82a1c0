"""Child processes that must not outlive the run that started them (a kill -9 of the run included)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

# looked up at import, not in a freshly forked child, where loading a library is not safe
_prctl = ctypes.CDLL(None).prctl if sys.platform == "linux" else None
PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGTERM, parent: int | None = None) -> None:
    """Have the kernel send `sig` to this process when the thread that started it ends (Linux; a no-op
    elsewhere). With `parent` (its pid), exit at once if that process is gone already."""
    if _prctl is not None:
        _prctl(PR_SET_PDEATHSIG, sig)
    if parent is not None and os.getppid() != parent:
        os._exit(1)
