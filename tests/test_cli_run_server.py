"""`ldx run` without PREFECT_API_URL: the temporary Prefect server it starts lives exactly as long as the
run, also when the run is killed; so does the index stage's encoder process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from flows.manifest import read_manifest
from tests.test_flow import write_jsonl_slice

LDX = str(Path(sys.executable).with_name("ldx"))
APP = b"prefect.server.api.server:create_app"
SPAWNED = b"multiprocessing.spawn"  # how a spawned Python child (the index process) is started


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie has ended; only its parent has not collected it yet


def _children_of(parent: int, marker: bytes = APP) -> list[int]:
    """The processes `parent` started whose command line holds `marker` (default: Prefect API servers)."""
    found = []
    for d in Path("/proc").iterdir():
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) if d.name.isdigit() else -1
            if ppid == parent and marker in (d / "cmdline").read_bytes():
                found.append(int(d.name))
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return found


def _run(corpus: Path, out: Path, env: dict, stages: str = "[]") -> subprocess.Popen:
    return subprocess.Popen(
        [LDX, "run", str(corpus), "--out", str(out), "--set", f"run.stages={stages}"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(what: str, check, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"no {what} after {timeout:.0f} s"
        time.sleep(0.05)


def test_the_temporary_server_lives_as_long_as_the_run_even_a_killed_one(shared_data, tmp_path):
    corpus = tmp_path / "in"
    corpus.mkdir()
    write_jsonl_slice(shared_data, corpus / "criminal.jsonl", 3)
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PREFECT_LOGGING_LEVEL"] = "WARNING"

    killed = _run(corpus, tmp_path / "out", env)
    servers: list[int] = []
    _wait_for("server process", lambda: servers.extend(_children_of(killed.pid)) or servers, 60)
    killed.kill()
    killed.wait()
    _wait_for("end of the killed run's server", lambda: not _alive(servers[0]), 15)

    run = _run(corpus, tmp_path / "out", env)
    servers.clear()
    _wait_for(
        "server process",
        lambda: servers.extend(_children_of(run.pid)) or servers or run.poll() is not None,
        60,
    )
    _, stderr = run.communicate(timeout=300)
    assert run.returncode == 0, stderr[-3000:]
    assert servers and not _alive(servers[0])
    manifest = read_manifest(tmp_path / "out")
    assert manifest["status"] == "completed" and manifest["counts"]["documents"] == 3
    assert manifest["flow_run_id"]  # the flow ran against that server


def test_the_index_process_ends_with_a_killed_run(shared_data, tmp_path):
    corpus = tmp_path / "in"
    corpus.mkdir()
    write_jsonl_slice(shared_data, corpus / "criminal.jsonl", 40)
    env = {**os.environ, "PREFECT_LOGGING_LEVEL": "WARNING"}
    run = _run(corpus, tmp_path / "out", env, '["index"]')
    children: list[int] = []
    _wait_for("index process", lambda: children.extend(_children_of(run.pid, SPAWNED)) or children, 120)
    run.kill()
    run.wait()
    _wait_for("end of the killed run's index process", lambda: not _alive(children[0]), 15)
