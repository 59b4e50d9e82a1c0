"""OUT_DIR/manifest.json: what a run was (ids, times, code, model, config) and what it produced.

The manifest is written as "running" before any output, so a run that is killed leaves a record that
the next run on the same input and config resumes under the same run_id.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import secrets
import subprocess
from importlib import metadata
from pathlib import Path

from flows.config import LdxConfig
from flows.tasks import active_stages, sha256_file
from pipeline.paths import REPO_ROOT
from pipeline.store import atomic_write_json
from retrieval.encoder import checkpoint_file  # the same lookup the model stages make

MANIFEST = "manifest.json"
RESUMABLE = ("running", "failed")
# What a run id may look like: it becomes a path part (run_id=<id>) and is shown in queries.
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


class ManifestError(ValueError):
    """A manifest.json this code did not write: its run id is not one."""


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def new_run_id() -> str:
    """Sortable by start time, unique across machines writing runs side by side."""
    return dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def code_version() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "describe", "--always", "--dirty", "--tags"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return metadata.version("longdoc-xl")


def model_identity(config: LdxConfig) -> dict[str, str | None]:
    """The model a run uses, by checkpoint sha256; none when no model stage is registered and chosen."""
    batch, run = active_stages(config)
    path = checkpoint_file(config.model.checkpoint) if batch or run else None
    if path is None or not path.is_file():
        return {"id": "", "checkpoint": None, "sha256": None}
    digest = sha256_file(path)
    return {"id": digest, "checkpoint": str(path), "sha256": digest}


def read_manifest(out_dir: Path) -> dict | None:
    """The manifest, None when there is none; one whose run id has any other form is refused."""
    path = out_dir / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    run_id = manifest.get("run_id") if isinstance(manifest, dict) else None
    if not isinstance(run_id, str) or not RUN_ID.fullmatch(run_id):
        shown = run_id if isinstance(run_id, str) else type(run_id).__name__
        raise ManifestError(
            f"{path}: {shown[:60]!r} is not a run id (letters, digits, '-', '_', '.'); refusing it"
        )
    return manifest


def resumable_run(out_dir: Path, input_dir: Path, fingerprint: str) -> dict | None:
    """The unfinished run to continue: same input and same effective config, not completed."""
    m = read_manifest(out_dir)
    if (
        m
        and m.get("status") in RESUMABLE
        and m.get("input_dir") == str(input_dir)
        and m.get("fingerprint") == fingerprint
    ):
        return m
    return None


def start_manifest(
    out_dir: Path,
    input_dir: Path,
    run_id: str,
    flow_run_id: str | None,
    config: LdxConfig,
    model: dict,
    fingerprint: str,
    resumed: dict | None,
) -> dict:
    batch, run = active_stages(config)
    manifest = {
        "run_id": run_id,
        "status": "running",
        "flow_run_id": flow_run_id,
        "flow_run_ids": [*(resumed or {}).get("flow_run_ids", []), flow_run_id],
        "started_at": (resumed or {}).get("started_at") or now(),
        "ended_at": None,
        "input_dir": str(input_dir),
        "out_dir": str(out_dir),
        "code_version": code_version(),
        "model": model,
        "stages": ["parse", "segment", *batch, *run, "write"],
        "fingerprint": fingerprint,
        "config": config.model_dump(mode="json"),
        "counts": {},
        "seconds": {},
    }
    atomic_write_json(out_dir / MANIFEST, manifest)
    return manifest


def finish_manifest(out_dir: Path, manifest: dict, status: str, counts: dict, seconds: dict) -> dict:
    manifest.update(
        status=status, ended_at=now(), counts=counts, seconds={k: round(v, 3) for k, v in seconds.items()}
    )
    atomic_write_json(out_dir / MANIFEST, manifest)
    return manifest
