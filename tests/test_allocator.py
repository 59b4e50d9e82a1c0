"""`ldx run` restarts under jemalloc where the system has it (pipeline.process.restart_under_jemalloc)."""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    ctypes.util.find_library("jemalloc") is None,
    reason="no libjemalloc on this system (Debian: libjemalloc2)",
)
MAPPED = (
    "from pipeline.process import restart_under_jemalloc\n"
    "restart_under_jemalloc()\n"
    "import os\n"
    "print(any('jemalloc' in line for line in open('/proc/self/maps')), os.environ['MALLOC_CONF'])\n"
)
STATS = "___ Begin jemalloc statistics ___"  # what jemalloc prints at exit with MALLOC_CONF=stats_print:true


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "LDX_MALLOC", "MALLOC_CONF")}
    return {**env, **extra}


def _python(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=120)


def test_a_restarted_process_runs_under_jemalloc_with_its_settings():
    done = _python(["-c", MAPPED], _env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "dirty_decay_ms:30000,muzzy_decay_ms:0"]


def test_ldx_malloc_glibc_keeps_the_c_librarys_allocator():
    done = _python(["-c", MAPPED.replace("os.environ['MALLOC_CONF']", "'-'")], _env(LDX_MALLOC="glibc"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "-"]


def test_ldx_run_restarts_under_jemalloc_and_other_commands_do_not():
    env = _env(MALLOC_CONF="stats_print:true")  # a setting of the user's wins over the default one
    run = _python(["-m", "flows", "run", "--help"], env)
    assert run.returncode == 0 and "INPUT_DIR" in run.stdout
    assert STATS in run.stderr
    other = _python(["-m", "flows", "config", "show"], env)
    assert other.returncode == 0 and STATS not in other.stderr
