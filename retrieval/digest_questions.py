"""Questions about a published case's own sections: "本案的裁判要旨是什么？", "该案例有什么典型意义？", "本案的关键词有哪些？",
"裁判结果是什么？".

A case the courts publish for guidance (a 指导案例, an entry of the 人民法院案例库, a 典型案例) is written in headed
sections: 关键词, 裁判要点 or 裁判要旨, 相关法条, 基本案情, 裁判结果, 裁判理由, 典型意义 or 案例意义. Its reader wants
first the rule it stands for or why it was published, and the search answers these with whichever sentence
of the case looks most like the question. `asked_section(question)` reads which section a question asks
for; `section_answer(question, passages)` answers with that section as printed, from its heading (a block of
its own, or 裁判要点：… opening the first paragraph) to the next heading, and shows its sentences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from retrieval.hybrid import Passage
from retrieval.text import sentences

# what a question asks for, and the headings that name it in a case (裁判要点 and 裁判要旨 are one section)
_ASKED = (
    ("gist", re.compile(r"裁判要[旨点]|要旨|裁判规则")),
    ("significance", re.compile(r"(?:典型|指导|案例)意义|(?:什么|何|哪些)(?:典型|指导)?意义|的意义")),
    ("keywords", re.compile(r"关键词")),
    ("result", re.compile(r"裁判结果")),
)
_NAMES = {
    "gist": {"裁判要旨", "裁判要点", "案例要旨", "要旨"},
    "significance": {"典型意义", "案例意义", "指导意义"},
    "keywords": {"关键词"},
    "result": {"裁判结果"},
}
# every heading that opens a section, asked or not: the next one ends the section before it
_HEADINGS = (
    "裁判要旨|裁判要点|案例要旨|要旨|典型意义|案例意义|指导意义|关键词|裁判结果|基本案情|案情简介|裁判理由|相关法条"
    "|关联索引|法律依据|案例评析"
)
# a heading, numbered or bracketed ((三)典型意义, 【裁判要旨】), alone or before its text (裁判要点：…, 关键词　商事/…)
_HEADING = re.compile(
    rf"^\s*(?:[（(][一二三四五六七八九十]{{1,3}}[)）]|[一二三四五六七八九十]{{1,3}}、|【)?\s*({_HEADINGS})\s*(】|[:：\u3000 ]|$)"
)
# what ends a section without naming one of its kind: a number before the next heading, a bracketed heading
# of another kind (【点评专家】 after a 典型意义)
_SECTION_END = re.compile(r"^\s*(?:[（(]?[一二三四五六七八九十]{1,3}[)）、]|【[^】]{1,12}】)\s*$")
_MAX_BLOCKS = 12  # a section longer than this is no digest's


@dataclass(frozen=True)
class Section:
    """What `section_answer` read: the section as printed, its answer type, and the sentences shown."""

    answer: str
    answer_type: str
    units: list[tuple[str, str]]


def asked_section(question: str) -> str | None:
    """The section a question asks for: gist (裁判要点 / 裁判要旨), significance (典型意义), keywords, result."""
    return next((name for name, asks in _ASKED if asks.search(question)), None)


def _heading(text: str) -> tuple[str, str] | None:
    """(heading, the text after it) of a block that opens a section; keywords may follow 关键词 unspaced."""
    m = _HEADING.match(text)
    if m is None:
        if text.lstrip().startswith("关键词"):
            return "关键词", text.lstrip()[3:]
        return None
    return m.group(1), text[m.end() :]


def _section(passages: list[Passage], names: set[str]) -> list[tuple[str, str]] | None:
    """(segment_id, text) of each block of the first section one of `names` heads, the heading left out."""
    for i, p in enumerate(passages):
        found = _heading(p.text)
        if found is None or found[0] not in names:
            continue
        parts = [(p.segment_id, found[1].strip())] if found[1].strip() else []
        for q in passages[i + 1 : i + 1 + _MAX_BLOCKS]:
            if _heading(q.text) or _SECTION_END.match(q.text):
                break
            parts.append((q.segment_id, q.text.strip()))
        return [part for part in parts if part[1]] or None
    return None


def section_answer(question: str, passages: list[Passage]) -> Section | None:
    """The section of the case the question asks for, as printed (keywords parted by 、 where spaced), with its
    sentences; None when the question asks for none or the case has no such section."""
    asked = asked_section(question)
    parts = _section(passages, _NAMES[asked]) if asked else None
    if parts is None:
        return None
    if asked == "keywords":
        words = re.sub(r"\s+", "、", parts[0][1].strip())
        return Section(words, "field", parts[:1])
    units = [(seg, text[a:b].strip()) for seg, text in parts for a, b in sentences(text)]
    return Section("".join(text for _, text in parts), "sentence", units)
