"""Questions about what a Chinese court decided (判决结果是什么？二审法院如何判决？一审法院怎么判的？) and the costs it
ordered (二审案件受理费是多少？由谁负担？), answered from the items of the ruling asked about.

The search-and-read path answers these with the one sentence most like the question: "判决结果是什么" got the
costs line (二审案件受理费4896.04元，由上诉人王凯负担。) or one item of three, "一审法院如何判决" got the second
instance's own costs, and "受理费由谁负担" a line of the proceedings. A court's decision is its ruling's
items, all of them, without what every ruling adds (costs, interest for late payment, the right to appeal);
the ruling of an earlier instance is the one the judgment reports (一审法院…判决：一、…；二、…。), told by
the case number or the court it names; a cost is a clause of the ruling's costs line
(一审案件受理费5488元，由游楷军负担；再审案件受理费5488元，由张剑飞、李发启共同负担。), the asked instance's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import chain

from retrieval.hybrid import Passage
from retrieval.ruling_questions import ruling_items, units
from retrieval.text import ZH_WHETHER

_ASKS_OUTCOME = re.compile(
    r"如何判决?的?|怎么判|怎样判|判决结果|判决如何|判了什么|判决(?:内容|主文)|如何裁定|怎么裁定|裁定结果"
    r"|(?:审理|审判|上诉|再审|申请|诉讼|案件|一审|二审|本案)的?结果"
    r"|作出了?(?:什么|何种|怎样的)(?:判决|裁定)"
)
_WHY = re.compile(r"为什么|为何|理由|原因|依据|根据")
_FEE_Q = re.compile(r"受理费|诉讼费|案件费用")
_WHO = re.compile(r"谁|何人|哪一?方|哪些人|哪个|哪家")
_HOW = re.compile(r"(?:如何|怎么|怎样|怎么样)(?:负担|承担|分担|收取|处理)|(?:负担|承担|分担)(?:情况|方式)")
_HOW_MUCH = re.compile(r"多少|几|金额|数额")
# the instance a question or a reported ruling names (原审 is the one below, whichever it was)
_INSTANCE_WORDS = (
    ("一审", re.compile(r"一审|初审")),
    ("二审", re.compile(r"二审")),
    ("再审", re.compile(r"再审")),
)
_BELOW = re.compile(r"原审|原判")
# the instance a Chinese case number names ((2024)渝0107民初17358号 a first, 渝05民终11440号 a second, 内民申441号
# a retrial review)
CASE_INSTANCE = (
    ("一审", re.compile(r"[民刑行]初|初字")),
    ("二审", re.compile(r"[民刑行]终|终字")),
    ("再审", re.compile(r"[民刑行][申再]|[申再]字")),
)
_REPORTED = re.compile(r"(?:判决|裁定)(?:如下)?[：:]")
_ASKED_FOR = re.compile(r"请求|要求|诉请|申请")  # 请求判决：… is a party's, not a ruling
# where a judgment reports an earlier ruling (the parser may take 一审法院…判决如下： for a party's CLAIMS, and
# the first instance's 本院认为…判决如下： quoted whole for this court's OPINION)
_REPORTING_BLOCKS = frozenset({"FACTS", "PROCEDURE", "CLAIMS", "OPINION"})
_KIND = re.compile(r"(民事|刑事|行政|执行)(?:附带民事)?(?:判决|裁定)|\d{4}[）)][^号]{0,12}?([民刑行执])")
_ITEM_START = re.compile(r"[一二三四五六七八九十]{1,3}、|（[一二三四五六七八九十]{1,3}）|\d{1,2}[、.．]")
# a ruling's cost clause: 二审案件受理费1050元，由上诉人许磊负担 (减半收取, 免收 as printed)
_COST = re.compile(r"(受理费|诉讼费用?)")
_BOILERPLATE = re.compile(r"迟延履行|如不服|上诉于|终审|申请执行的期间|判决如下|裁定如下")
_AMOUNT = re.compile(
    r"^(?:为|共计|计)?(?:人民币)?\s*([\d,，.．]+\s*万?元|[零〇一二三四五六七八九十百千万两]+元)"
)
# a payer is shown without its notes in brackets (已交纳), its closing 负担 and 共同 (由张、李共同负担 → 张、李)
_NOTE = re.compile(r"[（(][^（()）]*[）)]")
_PAYER_VERB = re.compile(r"(?:共同|各自|分别|连带)?(?:负担|承担)$")


def blockwise(passages: list[Passage], block_of: Callable[[str], int]) -> list[Passage]:
    """One passage per block, its segments' text joined under its first segment's id: a long paragraph's
    last segment may hold 判决如下： while its first words name the court (一审法院认为，…)."""
    out, last = [], None
    for p in passages:
        block = block_of(p.segment_id)
        if out and block == last:
            out[-1] = replace(out[-1], text=out[-1].text + p.text)
        else:
            out.append(p)
        last = block
    return out


@dataclass(frozen=True)
class Outcome:
    answer: str
    answer_type: str  # sentence (a ruling's items) or field (a cost's amount or payer)
    units: list[tuple[str, str]]  # (segment_id, text) the answer rests on


def outcome_part(question: str) -> str | None:
    """What a question asks of a ruling: what was decided ("ruling"), a cost's sum ("fee amount"), who
    bears it ("fee payer") or both ("fee"); None for any other (whether something was granted, why)."""
    if ZH_WHETHER.search(question) or _WHY.search(question):
        return None
    if _FEE_Q.search(question):
        who, much = _WHO.search(question), _HOW_MUCH.search(question)
        if _HOW.search(question) or who and much:
            return "fee"
        return "fee payer" if who else "fee amount" if much else None
    return "ruling" if _ASKS_OUTCOME.search(question) else None


def case_instance(case_number: str) -> str | None:
    """一审, 二审 or 再审: the instance a Chinese case number names ((2018)豫11民终1号 a second)."""
    return next((name for name, p in CASE_INSTANCE if p.search(case_number or "")), None)


def _asked_instance(text: str) -> str | None:
    """The instance a question names (原审: the one below), else None."""
    named = next((name for name, p in _INSTANCE_WORDS if p.search(text)), None)
    return named or ("原审" if _BELOW.search(text) else None)


def _reported(passages: list[Passage], case_number: str) -> list[tuple[str | None, list[tuple[str, str]]]]:
    """(instance, units) of each ruling of this case the facts or proceedings report, from 判决： to its
    last item: the instance by the sentence reporting it, else by its paragraph (原审 in a second instance
    is the first); a criminal judgment or an enforcement a civil one cites (…作出（2013）浙嘉刑初字第75号刑事
    判决：, …（2016）粤03执2419号之二执行裁定书，裁定：) is no ruling of its case."""
    out, facts = [], [p for p in passages if p.block_type in _REPORTING_BLOCKS]
    own, kind = case_instance(case_number), _kind(case_number)
    for i, p in enumerate(facts):
        for m in _REPORTED.finditer(p.text):
            said = p.text[p.text.rfind("。", 0, m.start()) + 1 : m.start()]
            if _ASKED_FOR.search(said) or kind and _kind(said) not in (None, kind):
                continue
            instance = _reporting(said) or _reporting(p.text[: min(m.start(), 20)])  # 一审法院认为，…判决：
            first = [(p.segment_id, u) for u in units(p.text[m.end() :])]
            out.append((_below(instance, own), _read_on(first, facts[i + 1 :])))
    return [r for r in out if r[1]]


def _read_on(first: list[tuple[str, str]], rest: list[Passage]) -> list[tuple[str, str]]:
    """The units of a reported ruling, from those after its 判决： (`first`) on into the next blocks (判决：
    may end its block): up to its costs, or a sentence after a full stop that is no item (宣判后，…); the
    interest for late payment, which may stand between two items, left out."""
    kept, last = [], ""
    for segment_id, unit in chain(first, ((q.segment_id, u) for q in rest for u in units(q.text))):
        if last and (_COST.search(unit) or last.endswith("。") and not _ITEM_START.match(unit)):
            break
        if not _BOILERPLATE.search(unit):
            kept.append((segment_id, unit))
        last = unit
    return kept


def _kind(text: str) -> str | None:
    """民, 刑, 行 or 执 (an enforcement): the kind of case a judgment or case number names."""
    m = _KIND.search(text)
    return (m.group(1) or m.group(2))[0] if m else None


def _reporting(said: str) -> str | None:
    """The instance whose ruling `said` reports: by the case number it cites, else by the court it names."""
    return next((n for n, c in CASE_INSTANCE if c.search(said)), None) or _asked_instance(said)


def _below(instance: str | None, own: str | None) -> str | None:
    """原审, or a ruling reported without naming its court, as the instance it is when the judgment's own is
    a second (the first); else as given."""
    return "一审" if instance in ("原审", None) and own == "二审" else instance


def _ruling(passages: list[Passage], asked: str | None, case_number: str) -> list[tuple[str, str]] | None:
    """The units of the ruling asked about: the judgment's own when the question names no other instance,
    else the one it reports of that instance (原审: the last it reports of another)."""
    own = case_instance(case_number)
    if asked is None or asked == own:
        return ruling_items(passages) or None
    asked, reported = _below(asked, own), _reported(passages, case_number)
    if asked == "原审":
        others = [u for instance, u in reported if instance != own]
        return others[-1] if others else None
    return next((u for instance, u in reported if instance == asked), None)


def _costs(passages: list[Passage]) -> list[tuple[str | None, str, str]]:
    """(instance or None, segment_id, clause) of each cost clause of the ruling."""
    out = []
    for p in passages:
        if p.block_type != "VERDICT":
            continue
        after_cost = False
        for unit in units(p.text):
            m = _COST.search(unit)
            if after_cost and unit.startswith("由"):  # 由甲负担一半；由乙负担一半 goes on after its semicolon
                out[-1] = (*out[-1][:2], out[-1][2] + unit)
            elif m and not _BOILERPLATE.search(unit):
                prefix = unit[: m.start()]
                both = "一、二审" in prefix
                out.append(("一、二审" if both else _asked_instance(prefix), p.segment_id, unit))
            after_cost = bool(m) or after_cost and unit.startswith("由")
    return out


def _cost(passages: list[Passage], asked: str | None, own: str | None) -> tuple[str, str] | None:
    """(segment_id, clause) of the cost the question asks: of the instance it names, else the judgment's
    own; a clause naming no instance (案件受理费…) is the judgment's own."""
    costs = _costs(passages)
    wanted = asked or own
    for instance, segment_id, clause in costs:
        if instance == wanted or instance == "一、二审" and wanted in ("一审", "二审"):
            return segment_id, clause
    if asked in (None, own):
        plain = [(s, c) for instance, s, c in costs if instance is None]
        return plain[0] if plain else (costs[0][1:] if len(costs) == 1 else None)
    return None


def outcome_answer(question: str, part: str, passages: list[Passage], case_number: str) -> Outcome | None:
    """The answer to an outcome question (`outcome_part` gave `part`) from a Chinese judgment's passages,
    or None when its ruling does not say."""
    own, asked = case_instance(case_number), _asked_instance(question)
    if part == "ruling":
        found = _ruling(passages, asked, case_number)
        return Outcome("".join(u for _, u in found), "sentence", found) if found else None
    cost = _cost(passages, asked, own)
    if cost is None:
        return None
    clause = cost[1]
    fee = _COST.search(clause)
    if part == "fee":
        return Outcome(clause.rstrip("。；;"), "field", [cost])
    if part == "fee amount":
        m = _AMOUNT.search(clause[fee.end() :])
        return Outcome(m.group(1), "field", [cost]) if m else None
    at = clause.find("由", fee.end())
    payers = _NOTE.sub("", clause[at + 1 :]).rstrip("。；;").split("；由") if at >= 0 else []
    payer = "；".join(_PAYER_VERB.sub("", p) for p in payers)
    return Outcome(payer, "field", [cost]) if payer else None
