# Set-up and everyday commands. `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# The CPU wheel; a CUDA user installs their own torch into .venv first and this step is skipped.
TORCH_SPEC ?= torch==2.13.0
# pipeline/environment.py's defaults, exported for shells (the CLI and the tests set them themselves)
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 120
export PREFECT_SERVER_ANALYTICS_ENABLED ?= false
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false
export MALLOC_ARENA_MAX ?= 2

.PHONY: setup demo test lint samples clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -c "import torch" 2>/dev/null || $(PIP) install "$(TORCH_SPEC)"
	$(PIP) install -e ".[dev]"
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(VENV)/bin/ldx run data/samples --out out/demo

test: setup
	$(PY) -m pytest -q

LINTED := pipeline txl retrieval flows tests benchmarks

lint: setup
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)

clean:
	rm -rf out .pytest_cache

# Regenerate the demo PDFs in data/samples/ from data/sample_texts/ (deterministic bytes).
samples: setup
	$(PY) data/make_samples.py
