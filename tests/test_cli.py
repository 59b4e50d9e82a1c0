"""The CLI's help and error paths, run as a user runs them: the installed `ldx` in a subprocess."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LDX = shutil.which("ldx") or str(Path(sys.executable).with_name("ldx"))


def ldx(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([LDX, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


def test_help_lists_commands():
    out = ldx("--help")
    assert out.returncode == 0
    for command in ("config", "eval"):
        assert command in out.stdout


def test_config_show_prints_effective_toml():
    out = ldx("config", "show", "--set", "segment.max_tokens=200")
    assert out.returncode == 0, out.stderr
    assert "[segment]" in out.stdout and "max_tokens = 200" in out.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["config", "show", "--set", "segment.nope=1"], "segment.nope"),
        (["config", "show", "--config", "/no/such/file.toml"], "not found"),
    ],
)
def test_errors_are_one_line_and_non_zero(args, message):
    out = ldx(*args)
    assert out.returncode != 0
    assert message in out.stderr
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
