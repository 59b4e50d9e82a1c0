"""Files the project keeps outside OUT_DIR stay in its own private cache directory: jieba's dictionary
cache is not in the shared temp directory, the temporary Prefect server of `ldx run` keeps its database
(and Prefect its result storage) there instead of ~/.prefect."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, tmp_path: Path) -> str:
    """`code` in a fresh interpreter whose home, temp and cache directories are all under tmp_path."""
    for d in ("home", "tmp", "cache"):
        (tmp_path / d).mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(
        HOME=str(tmp_path / "home"),
        TMPDIR=str(tmp_path / "tmp"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        PYTHONPATH=str(ROOT),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="120",
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_jieba_keeps_its_cache_in_the_private_cache_dir(tmp_path):
    _python("from retrieval.text import jieba_module; jieba_module().lcut('本院认为')", tmp_path)
    own = tmp_path / "cache" / "longdoc-xl"
    assert (own / "jieba.cache").is_file()
    assert own.stat().st_mode & 0o777 == 0o700
    assert not list((tmp_path / "tmp").glob("jieba*"))


def test_the_temporary_prefect_server_keeps_its_database_in_the_cache_dir(tmp_path):
    out = _python(
        "from flows.api_server import temporary_api\n"
        "with temporary_api(lambda: None):\n"
        "    from prefect.settings import get_current_settings\n"
        "    print(get_current_settings().results.local_storage_path)\n",
        tmp_path,
    )
    own = tmp_path / "cache" / "longdoc-xl" / "prefect"
    assert (own / "prefect.db").is_file()
    assert Path(out.strip().splitlines()[-1]) == own / "storage"
    assert not (tmp_path / "home" / ".prefect" / "prefect.db").exists()
