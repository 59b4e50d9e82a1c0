"""Shared fixtures: where the real corpora live, and one Prefect test server for the whole session."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.environment import set_environment_defaults

set_environment_defaults()  # before any test module imports Prefect or tokenizers

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = (ROOT / ".." / "shared" / "data").resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"the shared corpora are missing: expected them at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def prefect_harness():
    """One temporary Prefect API for every flow test of the session (its start-up is slow on 2 cores)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="module")
def torch_one_thread():
    """One intra-op torch thread: on a 2-core machine two threads mostly wait for each other."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def demo_run(prefect_harness, tmp_path_factory) -> Path:
    """OUT_DIR of `ldx run data/samples` with the shipped model (what `make demo` writes), built once per session."""
    from flows.run import run_flow
    from retrieval.encoder import checkpoint_file

    if checkpoint_file(None) is None:
        pytest.fail("no shipped checkpoint in data/models/")
    out = tmp_path_factory.mktemp("demo") / "out"
    run_flow(str(ROOT / "data" / "samples"), str(out), {"run": {"batch_size": 2, "workers": 2}})
    return out
