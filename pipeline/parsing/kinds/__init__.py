"""Document kinds. Each module in this package is one kind and provides:

    KIND: DocKind
    score(text: str, language: str) -> float          # 0..1, how much the text reads like this kind
    type_spans(text: str, spans: list[Span]) -> list[Span]   # may split spans; sets every .type
    extract_meta(text: str, spans: list[Span]) -> tuple[DocMeta, str | None]   # meta and title

Adding a kind is adding a module here; detection and typing find it by discovery.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from types import ModuleType

from pipeline.records import DocKind


@cache
def registry() -> dict[DocKind, ModuleType]:
    mods = (importlib.import_module(f"{__name__}.{m.name}") for m in pkgutil.iter_modules(__path__))
    return {mod.KIND: mod for mod in mods if hasattr(mod, "KIND")}


def module_for(kind: DocKind) -> ModuleType:
    return registry()[kind]
