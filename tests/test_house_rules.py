"""The house rules a newcomer can rely on: short modules and functions, imports at the top of a module
unless a comment gives the measured start-up cost that keeps one lazy, and imports pointing one way
(flows → retrieval → txl → pipeline)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pipeline", "txl", "retrieval", "flows")
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 60
# a package may import those after it in this order, never those before it
LAYERS = ("flows", "retrieval", "txl", "pipeline")


def modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", modules(), ids=_name)
def test_module_keeps_the_house_rules(path):
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    assert len(lines) <= MAX_MODULE_LINES, f"{_name(path)}: {len(lines)} lines"
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            assert length <= MAX_FUNCTION_LINES, f"{_name(path)}:{node.lineno} {node.name}: {length} lines"
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    said = lines[inner.lineno - 1] + (lines[inner.lineno - 2] if inner.lineno > 1 else "")
                    assert "start-up" in said, f"{_name(path)}:{inner.lineno}: import inside a function"


@pytest.mark.parametrize("path", modules(), ids=_name)
def test_imports_point_one_way(path):
    package = path.relative_to(ROOT).parts[0]
    below = set(LAYERS[LAYERS.index(package) :])
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            assert top not in LAYERS or top in below, f"{_name(path)}:{node.lineno} imports {name}"
            assert not (top == "prefect" and package in ("txl", "pipeline")), f"{_name(path)} imports Prefect"
