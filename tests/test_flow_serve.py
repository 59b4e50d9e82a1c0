"""`ldx serve`: the run flow as a deployment on a cron schedule, against a real `prefect server start`
(schedules need the server's scheduler, which the temporary test server does not run)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from flows.manifest import read_manifest
from tests.test_flow import write_jsonl_slice

BIN = Path(sys.executable).parent
EVERY_5_SECONDS = "* * * * * */5"  # croniter's optional sixth field is seconds


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(what: str, check, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        assert proc.poll() is None, f"{what}: process exited with {proc.returncode}"
        time.sleep(0.5)
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def test_serve_runs_the_flow_on_a_near_schedule(shared_data, tmp_path):
    corpus = tmp_path / "in"
    corpus.mkdir()
    write_jsonl_slice(shared_data, corpus / "criminal.jsonl", 3)
    out = tmp_path / "out"
    api = f"http://127.0.0.1:{_free_port()}/api"
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "PREFECT_API_URL": api,
        "PREFECT_UI_ENABLED": "false",
        "PREFECT_RUNNER_POLL_FREQUENCY": "1",
        "PREFECT_LOGGING_LEVEL": "WARNING",
    }
    port = api.rsplit(":", 1)[1].split("/")[0]
    logs = open(tmp_path / "server.log", "w")
    server = subprocess.Popen(
        [str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port", port],
        env=env,
        stdout=logs,
        stderr=logs,
    )
    serve = None
    try:
        _wait("prefect server", lambda: _healthy(api), server, 150)
        serve_log = open(tmp_path / "serve.log", "w")
        serve = subprocess.Popen(
            [
                str(BIN / "ldx"),
                "serve",
                str(corpus),
                "--out",
                str(out),
                "--cron",
                EVERY_5_SECONDS,
                "--name",
                "test",
                "--set",
                "run.stages=[]",
            ],
            env=env,
            stdout=serve_log,
            stderr=serve_log,
        )
        _wait("a scheduled run", lambda: (read_manifest(out) or {}).get("status") == "completed", serve, 150)
    finally:
        for proc in (serve, server):
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
    manifest = read_manifest(out)
    assert manifest["counts"]["documents"] == 3
    assert manifest["flow_run_id"]
