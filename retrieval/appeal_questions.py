"""Questions about the appeal a Chinese judgment allows: "这份判决可以上诉吗？", "本判决是否为终审判决？", "上诉期限是多久？",
"向哪个法院上诉？", "如何提起上诉？", and the same of a reconsideration (复议) a ruling allows instead.

A judgment tells its parties, in set words after its ruling, what they may do next: 如不服本判决，可在判决书送达之日起
十五日内，向本院递交上诉状，…，上诉于某某中级人民法院 (a civil judgment), 如不服本判决，可在接到判决书的第二日起十日内，
通过本院或者直接向某某中级人民法院提出上诉 (a criminal one), 如不服本裁定，可以自收到裁定书之日起五日内向本院申请复议一次
(a ruling on preservation or enforcement); or that there is nothing more to do: 本判决为终审判决, 本裁定送达后即发生法律效力.
The search-and-read path answers these with whatever sentence mentions 上诉: the history a later instance reports
(张勇不服，提出上诉; 一审宣判后，被告人在法定期限内没有上诉) or an earlier judgment that has taken effect.
`asked_notice(question)` reads what a question asks; `notice_answer(question, passages)` answers from the
judgment's own notice, the last one in its text, and shows it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from retrieval.hybrid import Passage, sentences_of
from retrieval.text import ZH_WHETHER

_APPEAL, _REVIEW = "上诉", "复议"
# what a question asks of the notice, tried in this order: a yes-no question on finality or on the right to
# appeal, the time allowed, the court, the way
_FINAL_Q = re.compile(r"终审")
_CAN_Q = re.compile(
    r"(?:能否|可否|是否(?:可以|能够?)|能不能|可不可以|还能|还可以|有权)[^，。？]{0,8}(?:上诉|申请复议|复议)"
    r"|(?:可以|能|可)(?:提起|提出|申请)?(?:上诉|复议)吗"
)
_TERM_Q = re.compile(r"(?:上诉|复议)[^，。？]{0,3}(?:期限|期间|期)|多少[日天]|几[日天]|多长时间|多久")
_COURT_Q = re.compile(r"(?:哪个|哪一?家|哪一个|何|什么)法院|上诉法院|(?:上诉|复议)(?:于|到|至)哪|向哪")
_HOW_Q = re.compile(
    r"(?:如何|怎样|怎么)(?:提起|提出|申请|进行)?(?:上诉|复议)|(?:上诉|复议)的?(?:程序|方式|途径)"
)
# the court of a second instance, asked of a first: the court its notice names ("二审法院是哪个法院？")
_SECOND_COURT_Q = re.compile(r"二审(?:的)?(?:法院|审理法院)")
# a party named by its role, and what it asked on appeal: no question about the notice
_ROLE = re.compile(r"被?上诉人|上诉(?:请求|理由|意见|称)")
# the judgment's own notice: 如不服本判决…上诉 / 复议 (如果不服, 如不服从); its own finality
_NOTICE = re.compile(r"(?:^|[\s，。；）)])(?:当事人)?如(?:果)?不服(?:从)?本(?:判决|裁定|决定)")
_FINAL = re.compile(
    r"^[\s）)]*本(?:判决|裁定|决定)(?:书)?(?:为|系|是)终审(?:判决|裁定|决定)"
    r"|^[\s）)]*本(?:裁定|决定)(?:书)?(?:送达|宣告)后(?:即|立即)(?:发生法律效力|生效)"
)
# the time a notice allows: (可)在判决书送达之日起十五日内 / 可于接到判决书之次日起10日内 / 可以自收到裁定书之日起五日内
_TERM = re.compile(r"(?:可以?|应当?)\s*(?:在|于|自)?\s*([^，。；]{2,30}?[日天]\s*内)")
# the court an appeal (or a reconsideration) goes to: 上诉于某某中级人民法院 / 直接向某某中级人民法院提出上诉 /
# 向某某高级人民法院申请复议; not 本院, where the notice is only handed in
_COURT = re.compile(
    r"上诉于\s*([^，。；\s]{2,40}?法院)"
    r"|(?:直接)?向\s*((?!本院)[^，。；\s]{2,40}?法院)\s*(?:提出|提起|申请)?(?:上诉|复议)"
)
# what follows a criminal notice in a sentence of its own: 书面上诉的，应当提交上诉状正本一份，副本二份。
_WRITTEN = re.compile(r"^\s*书面上诉")


@dataclass(frozen=True)
class NoticeAnswer:
    """What `notice_answer` read: the answer, its type and the sentences shown."""

    answer: str
    answer_type: str
    units: list[tuple[str, str]]


def asked_notice(question: str) -> tuple[str, str] | None:
    """(what is asked: final / can / term / court / how, or "appeal court" for the court of a second instance,
    of which remedy: 上诉 or 复议), or None for a question that asks none of these."""
    question = _ROLE.sub("", question)
    if _SECOND_COURT_Q.search(question) and _COURT_Q.search(question):
        return ("appeal court", _APPEAL)
    remedy = _REVIEW if _REVIEW in question else _APPEAL
    if _FINAL_Q.search(question) and remedy == _APPEAL:
        return ("final", remedy)
    if remedy not in question:
        return None
    if _CAN_Q.search(question):
        return ("can", remedy)
    if ZH_WHETHER.search(question):  # 被告人在法定期限内是否上诉: the history, not the notice
        return None
    for part, asks in (("term", _TERM_Q), ("court", _COURT_Q), ("how", _HOW_Q)):
        if asks.search(question):
            return (part, remedy)
    return None


def _own_notice(passages: list[Passage]) -> tuple[str, list[tuple[str, str]]] | None:
    """("notice" or "final", the sentences stating it) of the judgment's own last word on what may follow;
    None when it states none."""
    units = sentences_of(passages)
    for n in range(len(units) - 1, -1, -1):
        _, segment_id, sentence = units[n]
        if _FINAL.search(sentence):
            return "final", [(segment_id, sentence)]
        if _NOTICE.search(sentence) and (_APPEAL in sentence or _REVIEW in sentence):
            shown = [(segment_id, sentence)]
            if n + 1 < len(units) and _WRITTEN.match(units[n + 1][2]):
                shown.append(units[n + 1][1:])
            return "notice", shown
    return None


def notice_answer(question: str, passages: list[Passage]) -> NoticeAnswer | None:
    """The answer to a question on the appeal (or reconsideration) the judgment allows, from its own notice:
    YES / NO, the time allowed, the court, the notice itself; "none" when the judgment is final and the
    question asks what an appeal would need. None when the question asks none of these or the judgment
    states no notice (nor finality)."""
    asked = asked_notice(question)
    found = _own_notice(passages) if asked else None
    if found is None:
        return None
    (part, remedy), (kind, shown) = asked, found
    text = "".join(s for _, s in shown)
    allows = kind == "notice" and remedy in shown[0][1]
    if part == "final":
        return NoticeAnswer(*(("YES", "yes") if kind == "final" else ("NO", "no")), shown)
    if part == "can":
        if kind == "final" or (remedy == _APPEAL and not allows):
            return NoticeAnswer("NO", "no", shown)
        return NoticeAnswer("YES", "yes", shown) if allows else None
    if not allows:  # a second instance's court is its own: the judgment's head says it
        return NoticeAnswer("none", "none", shown) if kind == "final" and part != "appeal court" else None
    if part == "how":
        return NoticeAnswer(text.strip().rstrip("。"), "sentence", shown)
    m = (_TERM if part == "term" else _COURT).search(text)
    if m is None:
        return NoticeAnswer("none", "none", shown)
    return NoticeAnswer(re.sub(r"\s+", "", next(g for g in m.groups() if g)), "field", shown)
