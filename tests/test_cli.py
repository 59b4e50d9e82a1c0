"""The CLI's help and error paths, run as a user runs them: the installed `ldx` in a subprocess."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from flows.cli import app

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


def _commands(command, path=()):
    """Every (argv path, click command) of the CLI tree, groups included."""
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


def test_help_keeps_every_bracketed_word():
    """Rich reads "[run]" as markup and drops it: a help text's TOML table names must be escaped."""
    checked = 0
    for path, command in _commands(get_command(app)):
        words = {
            w
            for p in command.params
            if getattr(p, "help", None)
            for w in re.findall(r"\[[a-z]+\]", p.help.replace("\\[", "["))
        }
        if not words:
            continue
        out = CliRunner().invoke(app, [*path, "--help"], terminal_width=200)
        assert out.exit_code == 0, out.output
        for w in words:
            assert w in out.output, (path, w)
        checked += 1
    assert checked >= 2
