"""Where the files are (pipeline.paths) and the environment every entry point shares
(pipeline.environment), each checked in a fresh process: both are read once, at import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pipeline.environment import DEFAULTS

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import json, os
import flows  # sets the environment defaults, as `ldx` does
from pipeline import paths
from pipeline.environment import DEFAULTS
from pipeline.tokenizer import load_tokenizer
try:
    load_tokenizer()
    error = None
except FileNotFoundError as e:
    error = str(e)
print(json.dumps({
    "data": str(paths.DATA_DIR), "checkpoint": str(paths.SHIPPED_CHECKPOINT), "heads": str(paths.HEADS_DIR),
    "shared": str(paths.SHARED_DATA), "env": {k: os.environ.get(k) for k in DEFAULTS}, "error": error,
}))
"""


def _probe(tmp_path: Path, **env: str) -> dict:
    # neither the overrides nor the defaults set: the child process sees only what each test gives it
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LDX_") and k not in DEFAULTS}
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**clean, "PYTHONPATH": str(ROOT), **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout)


def test_the_data_folder_sits_beside_the_packages_and_the_shared_corpora_beside_the_working_folder(tmp_path):
    got = _probe(tmp_path)
    assert got["data"] == str(ROOT / "data") and got["error"] is None  # the shipped tokenizer loads
    assert Path(got["checkpoint"]).is_file() and Path(got["heads"]).is_dir()
    assert got["shared"] == "../shared/data"


def test_environment_overrides_move_the_data_and_keep_explicit_settings(tmp_path):
    elsewhere = tmp_path / "models-mount"
    got = _probe(tmp_path, LDX_DATA_DIR=str(elsewhere), LDX_SHARED_DATA="/corpora", HF_HUB_OFFLINE="0")
    assert got["checkpoint"] == str(elsewhere / "models" / "txl_lm.pt")
    assert got["error"] == f"{elsewhere / 'tokenizer' / 'tokenizer.json'}: no tokenizer.json there"
    assert got["shared"] == "/corpora"
    assert got["env"] == {**DEFAULTS, "HF_HUB_OFFLINE": "0"}  # the explicit setting wins, the rest filled in


def test_a_malformed_arena_limit_is_left_to_the_allocator(tmp_path):
    # glibc ignores a MALLOC_ARENA_MAX that is not a number; start-up must not fail on it either
    got = _probe(tmp_path, MALLOC_ARENA_MAX="lots")
    assert got["env"]["MALLOC_ARENA_MAX"] == "lots" and got["error"] is None
