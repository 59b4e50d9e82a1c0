"""Questions about what a party to a Chinese judgment asked for or argued (王凯的上诉请求是什么？原告向一审法院提出了
哪些诉讼请求？魏青花的上诉理由是什么？被上诉人是如何答辩的？), answered from that party's own paragraph.

The search-and-read path answers these with the sentence most like the question: "魏青花的上诉理由是什么" got a
sentence of the first instance's record that holds 理由 ("原告银河家电主张是被告魏青花，理由在于…"), and "王凯的上诉请求
是什么" the first of his two requests. A judgment states each party's words in a paragraph of its own, opened by
the party and a verb (王凯上诉请求：…事实和理由：…; 银河家电向一审法院起诉请求：…; 王巍辩称：…), so the paragraph
of the party the question names, with the verb it asks about, is read: the requests up to 事实和理由, the
reasons after it (and the paragraphs that go on with them), a defence whole; an older judgment's account
(原告诉称：…，故诉请法院判决：…) gives the claim from its words asking the court on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.hybrid import Passage
from retrieval.text import ZH_WHETHER

# a sum, a person or a date asked is a span question (原告要求赔偿多少钱)
_PHRASE = re.compile(r"多少|几|谁|何时|哪天|哪一天|什么时候")
# what the court did with a request, or why (法院驳回再审申请的理由, 其他诉讼请求如何处理), is the court's word
_COURT_DID = re.compile(
    r"(?:如何|怎么|怎样)处理|(?:法院|本院)[^，。？]{0,8}(?:驳回|支持|采纳|认为|认定|处理)|不予支持"
)
_ASKS = (
    (
        "reasons",
        re.compile(
            r"(?:上诉|再审|申请|起诉|抗诉)的?(?:主要)?理由|事实和理由|(?:为什么|为何)(?:提起)?(?:上诉|申请再审)"
        ),
    ),
    ("request", re.compile(r"请求|诉请|要求法院")),
    ("defence", re.compile(r"答辩|辩称|抗辩|辩解|怎么辩|如何辩")),
)
# which request or reasons: of an appeal, of the first claim (向一审法院起诉请求, 向本院提出诉讼请求), of a retrial
_KIND = (
    ("上诉", re.compile(r"上诉")),
    ("再审", re.compile(r"再审")),
    ("起诉", re.compile(r"诉讼|起诉|一审|^诉$")),
)
# a party's paragraph: the party, then its verb within the first words
_OPENS = {
    # X上诉请求：…, X向一审法院起诉请求：…; or an account whose request comes at its end (X诉称：…，请求判令…)
    "request": re.compile(
        r"^((?:(?!称).){0,40}?)(?:(上诉|申请再审|再审|起诉|诉讼|反诉)?[，,]?请求|(?<![上申辩])(起?诉)称)[：:，,]"
    ),
    "reasons": re.compile(
        r"^(.{0,40}?)(?:(上诉|再审|申请再审)称|(?:主要)?(上诉|再审)理由(?:是|为)?)[：:，,]"
    ),
    "defence": re.compile(r"^(.{0,50}?)(?:答辩|辩|述)称[：:，,]?"),
}
_REASONS = re.compile(r"(?:事实和理由|事实与理由|主要理由(?:是|为|如下)?|理由如下)[：:]")
# where an account's request begins (…，故诉请法院判决：1、…; 请求人民法院判令被告：…; 其诉讼请求为：…)
_ASKED = re.compile(
    r"(?:请求|诉请|要求)(?:人民法院|法院|本院|贵院)?(?:依法)?(?:判令|判决)|诉讼请求(?:为|是|如下)|请求[：:]"
)
# a request ends where the paragraph goes on to a court's findings (…承担诉讼费用。一审法院认定事实：…)
_COURT = re.compile(r"(?<=。)(?:一审法院|二审法院|原审法院|本院|一审|二审|再审)")
# what stands around a party's name at a paragraph's opening (上诉人魏青花, 二上诉人, 许磊的, X不服…提起上诉称)
_ROLES = re.compile(
    r"^(?:原审原告|原审被告|原审第三人|被上诉人|上诉人|再审申请人|被申请人|申请人|原告|被告|第三人|二|共同)+"
)
_TAIL = re.compile(r"(?:共同|均|都|的|不服.*)+$")
_NAMES = re.compile(r"[、，,和与及]")
# the blocks a party's words stand in (the parser may take 被上诉人X辩称 for the proceedings)
_PARTY_BLOCKS = frozenset({"CLAIMS", "DEFENSE", "PROCEDURE"})
_MAX_BLOCKS = 16  # a party's reasons may go on over several paragraphs (二、退一步讲，…)
# the paragraphs a party's reasons go on in (the parser may take 上述事实充分证明… for facts), up to one that
# opens with another party's words, the court's, or the evidence offered (上诉人X在二审期间向本院提供了下列证据)
_GOES_ON = frozenset({"CLAIMS", "FACTS"})
_COURT_OPENS = re.compile(
    r"本院|(?:一审|原审|二审)法院(?:认定|认为|查明|审理|经审理|判决)|(?:一审|原审|二审)查明|二审(?:中|期间)|经审理"
    r"|庭审|审理中|在二审|在本院"
    r"|.{0,30}?(?:证据|质证)|.{0,25}?法院(?:一审|二审|再审)?(?:查明|认定|认为|审理)"
)


@dataclass(frozen=True)
class PartyWords:
    answer: str
    units: list[tuple[str, str]]  # (segment_id, text) the answer rests on


def party_part(question: str) -> str | None:
    """What a question asks of a party: its requests ("request"), why it appealed ("reasons") or how it
    answered ("defence"); None for any other (whether a request was granted, a sum asked for, what the court
    did with a request or why)."""
    if ZH_WHETHER.search(question) or _PHRASE.search(question) or _COURT_DID.search(question):
        return None
    return next((name for name, p in _ASKS if p.search(question)), None)


def _opening(part: str, text: str) -> tuple[str, str] | None:
    """(the words before the verb, the kind of request or reasons) when `text` opens with a party's words of
    `part`, else None; the kind is the verb's (上诉请求) or the court's it was made to (向一审法院起诉请求), not a
    role's (被上诉人X向一审法院…)."""
    m = _OPENS[part].match(text)
    if m is None:
        return None
    verb = next((g for g in m.groups()[1:] if g), "")
    said = verb + (after.group(0) if (after := re.search(r"[向在].*$", m.group(1))) else "")
    return m.group(1), next((k for k, p in _KIND if p.search(said)), "")


def _names(opening: str) -> list[str]:
    """The names a paragraph opens with, roles and the rest left out (上诉人魏青花、王建忠 → 魏青花, 王建忠)."""
    cut = re.split(r"向|因|对|在|于", re.sub(r"[（(][^（()）]*[）)]", "", opening))[0]
    names = (_TAIL.sub("", _ROLES.sub("", part.strip())) for part in _NAMES.split(cut))
    return [n for n in names if len(n) >= 2]


def _chosen(
    question: str, part: str, blocks: list[Passage], parties: Sequence[str], named_only: bool
) -> int | None:
    """The index in `blocks` of the paragraph of the party the question names (of the kind of request or
    reasons it asks), else, when it names no party (of `parties`, or one that opens a paragraph) and not
    `named_only`, the first of that kind."""
    opened = [(i, kind, o) for i, b in enumerate(blocks) for kind in _OPENS if (o := _opening(kind, b.text))]
    opened = [(i, kind, o[1], _names(o[0])) for i, kind, o in opened if blocks[i].block_type in _PARTY_BLOCKS]
    names = [n for n in (*parties, *(n for *_, ns in opened for n in ns)) if n in question]
    # the kind is asked after the last name the question holds (…上诉人X与被上诉人Y…纠纷案中，Y的诉讼请求)
    tail = question[max((question.rfind(n) + len(n) for n in names), default=0) :]
    asked = next((k for k, p in _KIND if p.search(tail)), None) if part != "defence" else None
    found = [(i, ns) for i, kind, k, ns in opened if kind == part and asked in (None, k)]
    named = [i for i, ns in found if any(n in question for n in ns)]
    if named:
        return named[0]
    return found[0][0] if found and not names and not named_only else None


def party_answer(
    question: str, part: str, blocks: list[Passage], parties: Sequence[str] = (), named_only: bool = False
) -> PartyWords | None:
    """The answer to a party question (`party_part` gave `part`) from a Chinese judgment's blocks (one
    passage per block; `parties` its parties' names), or None when no paragraph of the party it names
    says it; a question naming a role alone (上诉人的上诉请求) is answered unless `named_only` (the judgment
    is only the one cited first, so the question must name its party)."""
    if part == "reasons":
        return _reasons(question, blocks, parties, named_only)
    at = _chosen(question, part, blocks, parties, named_only)
    if at is None:
        return None
    b = blocks[at]
    opened = _OPENS[part].match(b.text)
    text = b.text[opened.end() :]
    if part == "request" and opened.group(3):  # an account: its request comes at its end
        return _account_request([(b.segment_id, text), *_going_on(blocks, at)])
    if part == "request":  # 上诉请求：…。事实和理由：…
        text = text[
            : min((m.start() for m in (_REASONS.search(text), _COURT.search(text)) if m), default=None)
        ]
    return _words([(b.segment_id, text)])


def _account_request(units: list[tuple[str, str]]) -> PartyWords | None:
    """The request a party's account ends with: from the first words asking the court (请求判令, 诉请法院判决,
    其诉讼请求为) to the account's end; None when it asks nothing."""
    for i, (segment_id, text) in enumerate(units):
        if (m := _ASKED.search(text)) is not None:
            return _words([(segment_id, text[m.end() :].lstrip("：:，, ")), *units[i + 1 :]])
    return None


def _reasons(
    question: str, blocks: list[Passage], parties: Sequence[str], named_only: bool
) -> PartyWords | None:
    """A party's reasons: a paragraph of them (上诉人X的主要上诉理由：…, X…提起上诉称：…), else what follows 事实和
    理由 in the paragraph of their requests or opens the next; and the paragraphs that go on with them
    (二、退一步讲，…), up to the next party's words or the court's."""
    at = _chosen(question, "reasons", blocks, parties, named_only)
    if at is not None:
        b = blocks[at]
        start = b.text[_OPENS["reasons"].match(b.text).end() :]
    else:
        at = _chosen(question, "request", blocks, parties, named_only)
        if at is None:
            return None
        cut = _REASONS.search(blocks[at].text)
        if cut is None and at + 1 < len(blocks):
            at, cut = at + 1, _REASONS.match(blocks[at + 1].text)
        if cut is None:
            return None
        start = blocks[at].text[cut.end() :]
    return _words([(blocks[at].segment_id, start), *_going_on(blocks, at)])


def _going_on(blocks: list[Passage], at: int) -> list[tuple[str, str]]:
    """(segment_id, text) of the paragraphs after `at` that go on with a party's words: up to one that opens
    with another party's words, the court's or the evidence offered."""
    units = []
    for b in blocks[at + 1 : at + _MAX_BLOCKS]:
        if (
            b.block_type not in _GOES_ON
            or _COURT_OPENS.match(b.text)
            or any(_opening(k, b.text) for k in _OPENS)
        ):
            break
        units.append((b.segment_id, b.text))
    return units


def _words(units: list[tuple[str, str]]) -> PartyWords | None:
    """The answer read from `units`, joined; None when they hold nothing."""
    units = [(s, t.strip()) for s, t in units if t.strip()]
    return PartyWords("".join(t for _, t in units), units) if units else None
