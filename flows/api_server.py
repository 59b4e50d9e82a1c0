"""The temporary Prefect API of one `ldx run`, started before anything heavy is imported.

Left to itself, Prefect starts its temporary server at the flow's first API call: after the CLI has
imported Prefect and the server module (seconds of work in the CLI process alone), and then the CLI
waits for it doing nothing. `ldx run` instead launches the same server process (Prefect's API app
under uvicorn on SQLite, without the UI and with only the services a temporary server runs, as
`SubprocessASGIServer` starts it) as its first step, and imports Prefect, torch and the model stages
while that process comes up.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.util import find_spec

from pipeline.paths import user_cache_dir
from pipeline.process import die_with_parent

API_URL = "PREFECT_API_URL"
PREFECT_HOME = "PREFECT_HOME"
# The run's own results are never persisted (every task and the flow say persist_result=False); what
# Prefect would still write (a failed run's exception) goes under the project's cache, not ~/.prefect.
STORAGE = "PREFECT_LOCAL_STORAGE_PATH"
UI_URL = "PREFECT_UI_URL"
PORT_TAKEN = 3  # uvicorn's exit code when it cannot bind its port


class ServerDidNotStart(RuntimeError):
    pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TemporaryAPI:
    """A Prefect API process on a free local port. `start()` returns at once; `ready()` waits for it."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.url = ""

    def start(self) -> TemporaryAPI:
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}/api"
        package_dir = os.path.dirname(os.path.dirname(find_spec("prefect").origin))
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "--app-dir",
                package_dir,
                "--factory",
                "prefect.server.api.server:create_app",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--log-level",
                "error",
                "--lifespan",
                "on",
            ],
            # the switches Prefect's own temporary server sets: the API alone, its few in-process services
            env={
                PREFECT_HOME: str(user_cache_dir("prefect")),  # its database, not ~/.prefect/prefect.db
                **os.environ,
                "PREFECT_UI_ENABLED": "0",
                "PREFECT__SERVER_EPHEMERAL": "1",
                "PREFECT__SERVER_FINAL": "1",
            },
            # the server ends when the CLI's main thread does, even after a kill -9; it would outlive it otherwise
            preexec_fn=die_with_parent if sys.platform == "linux" else None,
            # out of the terminal's process group: a Ctrl-C stops the run, which still reports to the
            # server that it crashed, and then stops the server
            start_new_session=True,
        )
        return self

    def ready(self, timeout: float) -> str:
        """Wait until the API answers; its URL. A port taken in the meantime starts it again elsewhere."""
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code == PORT_TAKEN:
                self.start()
                continue
            if code is not None:
                raise ServerDidNotStart(
                    f"the temporary Prefect server stopped before it answered (exit code {code})"
                )
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=1) as response:
                    if response.status == 200:
                        return self.url
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.05)
        self.stop()
        raise ServerDidNotStart(f"the temporary Prefect server did not answer within {timeout:.0f} s")

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None


@contextmanager
def temporary_api(while_starting: Callable[[], None]) -> Iterator[None]:
    """Run `while_starting` (the heavy imports) while a temporary Prefect API comes up, point Prefect's
    client, its threads and Dask's worker processes at it for the duration, then stop it.

    An API that Prefect's settings name (PREFECT_API_URL in the environment, a profile, a settings
    file) is used instead, and a setting that forbids temporary servers is obeyed, as Prefect would.
    """
    server = None if os.environ.get(API_URL) else TemporaryAPI().start()
    try:
        while_starting()
        # start-up: Prefect, ~1.1 s over this module (timed), imported once its server process is launched
        from prefect.context import refresh_global_settings_context
        from prefect.events.worker import EventsWorker  # start-up: Prefect
        from prefect.logging.handlers import APILogWorker  # start-up: Prefect
        from prefect.settings import (  # start-up: Prefect
            PREFECT_API_URL,
            PREFECT_SERVER_EPHEMERAL_ENABLED,
            PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS,
        )

        if server is not None and (PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value()):
            server.stop()  # launched before the settings could be read, and they say otherwise
            server = None
        if server is None:
            yield
            return
        # An empty UI address: the temporary server has no UI, so Prefect logs no link to one.
        env = {API_URL: server.ready(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value()), UI_URL: ""}
        env[STORAGE] = os.environ.get(STORAGE) or str(user_cache_dir("prefect", "storage"))
        env["PREFECT_RESULTS_PERSIST_BY_DEFAULT"] = "false"
        before = {key: os.environ.get(key) for key in env}
        os.environ.update(env)  # what Dask's worker processes inherit
        refresh_global_settings_context()  # Prefect read its settings at import, before the URL existed
        try:
            yield
        finally:
            # the run's last log lines and events, while the server still listens
            APILogWorker.drain_all(timeout=5)
            EventsWorker.drain_all(timeout=5)
            for key, value in before.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            refresh_global_settings_context()
    finally:
        if server is not None:
            server.stop()
