"""Questions about a criminal defendant's custody in the case (强制措施): 被告人冯云何时被刑事拘留？何时被逮捕？
是否被取保候审？何时被监视居住？现羁押于何处？

A defendant's own paragraph states it, in order, each measure with its day: 因涉嫌犯容留他人吸毒罪，于2017年4月22日被
…刑事拘留，同年5月5日被执行逮捕。现羁押于景德镇市看守所。 Its days lean on the one before (同年5月5日, 同月28日, 同日,
次日, 6月26日), so a day is read with the year and month the paragraph last gave. What came before the case (曾因…被
判处…，…刑满释放; 因吸毒被行政拘留) is not its custody. `custody_answer(question, blocks)` reads the defendant
the question names (else the only one) and the measure it asks about.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from retrieval.defendants import defendant_paragraphs, defendants
from retrieval.hybrid import Passage, sentences_of
from retrieval.text import ZH_WHETHER

# (measure, what a question calls it, what a paragraph says); 刑事拘留 is not 行政拘留
_MEASURES = (
    ("刑事拘留", r"刑事拘留|刑拘|(?<!行政)拘留", r"刑事拘留"),
    ("逮捕", r"逮捕", r"逮捕"),
    ("取保候审", r"取保候审|取保", r"取保候审"),
    ("监视居住", r"监视居住", r"监视居住"),
)
_WHEN = re.compile(r"何时|什么时候|哪天|哪一天|哪日|几月几日|日期|时间")
_WHERE = re.compile(
    r"(?:羁押|关押|押)(?:于|在)?(?:何处|哪里|哪儿|什么地方|哪个看守所|何地)|哪个看守所|在何处羁押"
)
_HELD = re.compile(r"现(?:羁押|关押|押)(?:于|在)([^，。；,;\s]{2,30}?(?:看守所|监狱|拘留所|戒毒所|留置室))")
# the custody of this case begins where the paragraph speaks of it (因本案, 因涉嫌…)
_THIS_CASE = re.compile(r"因本案|涉嫌|因此案")
_BEFORE_CASE = re.compile(r"判处|刑满|释放|行政拘留|治安拘留|强制戒毒|社区康复")
_DAY = re.compile(
    r"(?:(\d{4})年)?(?:(\d{1,2})月)?(\d{1,2})日|(同年|同月|同日|次日|当日|当天)"
    r"(?:(\d{1,2})月)?(?:(\d{1,2})日)?"
)
# an arrest approved or decided is carried out later, or the same day (批准逮捕，同日…执行逮捕)
_DECIDED = re.compile(r"(?:批准|决定)(?:对其)?逮捕")


@dataclass(frozen=True)
class Custody:
    answer: str
    answer_type: str  # field / yes / no
    units: list[tuple[str, str]]  # (segment_id, sentence)


def asked_custody(question: str) -> tuple[str, str] | None:
    """(measure or "held", kind: when / whether / where) a question asks about, else None."""
    if _WHERE.search(question):
        return "held", "where"
    measure = next((name for name, asked, _ in _MEASURES if re.search(asked, question)), None)
    if measure is None or "行政拘留" in question:
        return None
    if _WHEN.search(question):
        return measure, "when"
    return (measure, "whether") if ZH_WHETHER.search(question) else None


def custody_answer(question: str, blocks: list[Passage]) -> Custody | None:
    """The answer from the paragraph of the defendant the question names (else of the only defendant), or
    None when the question asks no such thing or the paragraph does not say."""
    asked = asked_custody(question)
    paragraphs = defendant_paragraphs(blocks) if asked else []
    names = defendants(blocks) if asked else []
    named = [n for n in names if n in question] or (names if len(names) == 1 else [])
    if not named:
        return None
    own = [b for name, b in paragraphs if name == named[0]]
    measure, kind = asked
    if kind == "where":
        for _, segment_id, sentence in sentences_of(own):
            if held := _HELD.search(sentence):
                return Custody(held.group(1), "field", [(segment_id, sentence)])
        return None
    events = [event for b in own for event in _events(b)]
    found = [e for e in events if e[0] == measure]
    if kind == "whether":
        shown = found or events
        if not shown:
            return None
        return Custody("YES" if found else "NO", "yes" if found else "no", [shown[0][2]])
    if not found:
        return None
    done = [e for e in found if not e[3]] or found  # an arrest carried out, not only decided
    return Custody(f"{done[0][1].year}年{done[0][1].month}月{done[0][1].day}日", "field", [done[0][2]])


def _events(block: Passage) -> list[tuple[str, dt.date, tuple[str, str], bool]]:
    """(measure, day, (segment_id, sentence), only decided) of each measure of this case the paragraph
    states, in its order; a day without its year or month takes the paragraph's last."""
    out, day, started = [], None, False
    for _, segment_id, sentence in sentences_of([block]):
        started = started or _THIS_CASE.search(sentence) is not None
        for clause in re.split(r"[，,；;]", sentence):
            for m in _DAY.finditer(clause):
                day = _day(m, day)
            if not started or day is None or _BEFORE_CASE.search(clause):
                continue
            for name, _, said in _MEASURES:
                if re.search(said, clause):
                    decided = name == "逮捕" and _DECIDED.search(clause) is not None
                    out.append((name, day, (segment_id, sentence), decided))
    return out


def _day(m: re.Match, last: dt.date | None) -> dt.date | None:
    """The day a match of _DAY names, read with the last day given (同年5月5日, 同月28日, 次日, 6月26日)."""
    year, month, dom, relative, rel_month, rel_dom = m.groups()
    if relative:
        if last is None or relative in ("同日", "当日", "当天"):
            return last
        if relative == "次日":
            return last + dt.timedelta(days=1)
        year, dom = last.year, rel_dom
        month = rel_month or (last.month if relative == "同月" else None)
        if month is None or dom is None:
            return last  # 同年 alone, 同年6月: no day to read
    year = int(year) if year else (last.year if last else None)
    month = int(month) if month else (last.month if last else None)
    if year is None or month is None:
        return last
    try:
        return dt.date(year, month, int(dom))
    except ValueError:
        return last
