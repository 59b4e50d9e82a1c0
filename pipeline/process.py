"""Child processes that must not outlive the run that started them (a kill -9 of the run included), the
named points where the crash tests kill a process, handing freed memory back to the system, and the
allocator `ldx run` runs under."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

# looked up at import, not in a freshly forked child, where loading a library is not safe
_libc = ctypes.CDLL(None) if sys.platform == "linux" else None
_prctl = getattr(_libc, "prctl", None)
_malloc_trim = getattr(_libc, "malloc_trim", None)  # glibc's; musl has none
_mallopt = getattr(_libc, "mallopt", None)
_M_MMAP_THRESHOLD, _M_ARENA_MAX = -3, -8  # mallopt's parameter numbers (glibc malloc.h)
LARGE_BLOCK = 256 * 2**10
PR_SET_PDEATHSIG = 1
MALLOC_ENV = "LDX_MALLOC"  # "glibc": `ldx run` keeps the C library's allocator
# freed pages go back to the system after 30 s unused (jemalloc's default: 10 s, then 10 more as "muzzy")
JEMALLOC_CONF = "dirty_decay_ms:30000,muzzy_decay_ms:0"


def die_with_parent(sig: int = signal.SIGTERM, parent: int | None = None) -> None:
    """Have the kernel send `sig` to this process when the thread that started it ends (Linux; a no-op
    elsewhere). With `parent` (its pid), exit at once if that process is gone already."""
    if _prctl is not None:
        _prctl(PR_SET_PDEATHSIG, sig)
    if parent is not None and os.getppid() != parent:
        os._exit(1)


FAULT_ENV = "LDX_FAULT"


_reached: dict[str, int] = {}


def fault_point(name: str) -> None:
    """Crash tests (tests/test_flow_kill_points.py): with LDX_FAULT=`name` (or `name:n`, the n-th time this
    process gets here) in the environment, the process dies here as a kill -9 would, so a test can stop a
    run at an exact point of its work instead of a random one."""
    want, _, nth = os.environ.get(FAULT_ENV, "").partition(":")
    if want != name:
        return
    _reached[name] = _reached.get(name, 0) + 1
    if _reached[name] == int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)


def release_freed_memory() -> None:
    """Hand the pages that freed blocks leave inside the allocator's heaps back to the system (glibc;
    a no-op elsewhere). Torch frees its tensors, but glibc keeps the space for later blocks, and blocks
    of other sizes leave it fragmented: over a run, a process that encodes batch after batch held 2.4 GB
    at 300 judgments. Costs a few milliseconds: call it between batches, not per tensor."""
    if _malloc_trim is not None:
        _malloc_trim(0)


def mmap_large_blocks(threshold: int = LARGE_BLOCK) -> None:
    """Have glibc map every block of at least `threshold` bytes on its own and unmap it when freed, instead
    of carving it from a heap that freed tensors of other sizes leave fragmented (glibc raises its own
    threshold as large blocks are freed, up to 32 MB). For the process of `ldx run`: at 300 judgments its
    peak fell from 2.4 GB to 1.2 GB. Not for the index encoder's process: mapping each large tensor afresh
    made its encoding 27% slower (40 judgments, one thread: 24.0 s against 18.9 s)."""
    if _mallopt is not None:
        _mallopt(_M_MMAP_THRESHOLD, threshold)


def limit_arenas(n: int) -> None:
    """At most `n` allocator arenas in this process (what MALLOC_ARENA_MAX says to a process at its
    start; pipeline/environment.py sets both)."""
    if _mallopt is not None:
        _mallopt(_M_ARENA_MAX, n)


def restart_under_jemalloc() -> None:
    """Replace this process with itself under jemalloc (LD_PRELOAD, its children inheriting it) when the
    system has it (Debian: libjemalloc2), it is not loaded already and LDX_MALLOC is not "glibc"; else
    return. For `ldx run`'s process tree: glibc's heap keeps what a long run's freed tensors leave
    fragmented, so the index process grew with the corpus (benchmarks/index_memory.py on 220 PDF documents:
    peak 1.86 GB with glibc, 1.57 GB under jemalloc; `ldx run` on them: 1.72 and 1.63 GB, 486.7 and
    472.7 s, benchmarks/run_scaling_pdfs.txt). Call it before anything else."""
    if os.environ.get(MALLOC_ENV, "jemalloc") == "glibc" or "jemalloc" in os.environ.get("LD_PRELOAD", ""):
        return
    library = ctypes.util.find_library("jemalloc")
    if library is None:
        return
    env = dict(os.environ, LD_PRELOAD=" ".join(filter(None, [os.environ.get("LD_PRELOAD"), library])))
    env.setdefault("MALLOC_CONF", JEMALLOC_CONF)
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
