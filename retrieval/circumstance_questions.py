"""Questions about a Chinese criminal judgment's sentencing circumstances (量刑情节): 被告人张某是否构成自首？
有无前科？是否系累犯？是否取得了被害人的谅解？是否系从犯？有哪些从轻处罚情节？

The search-and-read path answers these with the yes-no decider, which learned on CJRC's facts, where YES
is the likelier answer; a circumstance is the court's finding, stated in its reasoning (本院认为…), and the
finding has a form: the court states it (…如实供述自己的罪行，系坦白), denies it (其行为不能认定为自首，被告人
姚某某无前科劣迹, 并非起次要、辅助作用), or answers a party who claimed it (辩护人认为被告人具有自首情节的辩护意见，
与…事实不符，本院不予采纳). A prior conviction (前科) stands in the defendant's own paragraph (2015年2月因贩卖毒品
罪被判处有期徒刑一年三个月). A judgment that states no such circumstance for the defendant found none: the
answer is then NO, said to rest on the judgment's silence.

`asked_circumstance(question)` reads what a question asks; `circumstance_answer(question, asked, blocks)`
answers it for the defendant the question names from the judgment's blocks (one passage per block: PARTIES,
FACTS, OPINION …).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from retrieval.defendants import defendant_paragraphs, defendants
from retrieval.hybrid import Passage, sentences_of
from retrieval.text import ZH_WHETHER

# (circumstance, what a question calls it, what a judgment calls it); 认罪认罚 before 认罪
_CIRCUMSTANCES = (
    ("自首", r"自首|投案", r"自首"),
    ("坦白", r"坦白|如实供述|如实交代", r"坦白|如实(?:供述|交代|供认)"),
    ("立功", r"立功", r"立功"),
    ("累犯", r"累犯", r"累犯"),
    ("前科", r"前科|犯罪记录|判过刑", r"前科"),
    ("认罪认罚", r"认罪认罚", r"认罪认罚"),
    ("认罪", r"认罪|悔罪", r"认罪|悔罪"),
    ("谅解", r"谅解", r"谅解"),
    (
        "退赃",
        r"退赃|退赔|退缴|退还|退出",
        r"退赃|退赔|退缴|(?:退出|退还|返还|退回)[^，。；]{0,10}(?:赃|款|财物)",
    ),
    ("赔偿", r"赔偿|赔付", r"赔偿|赔付"),
    ("从犯", r"从犯|次要作用|辅助作用", r"从犯|次要作用|辅助作用|次要、辅助作用"),
    ("主犯", r"主犯|主要作用", r"主犯|主要作用"),
    ("未遂", r"未遂", r"未遂|未得逞"),
    ("中止", r"中止", r"犯罪中止|中止犯罪|系中止|中止情节"),
    ("未成年", r"未成年|未满十八|不满十八", r"未成年|未满十八周岁|不满十八周岁"),
    ("初犯", r"初犯|偶犯|初次犯罪", r"初犯|偶犯|初次犯罪"),
)
_ASKED = tuple((name, re.compile(q), re.compile(t)) for name, q, t in _CIRCUMSTANCES)
# which circumstances the court weighed: 有哪些量刑情节, 哪些从轻处罚情节, 为什么从轻处罚
_WHICH = re.compile(
    r"(?:哪些|什么|何种|哪几)[^？?，,]{0,8}情节|(?:从轻|从重|减轻)[^？?，,]{0,6}(?:情节|理由|原因|依据)"
    r"|(?:为什么|为何|因何)[^？?，,]{0,10}(?:从轻|从重|减轻)"
)
# whether the court accepted what a party argued (是否采纳了辩护人关于…系从犯的意见) is the ruling route's
_WEIGHS_ARGUMENT = re.compile(r"是否(?:予以)?(?:采纳|采信|支持|认可|同意)")
_LIGHTER = re.compile(r"从轻|减轻|免除|免予")
_HEAVIER = re.compile(r"从重")
# a party claiming a circumstance, and the court's answer to the claim
_CLAIM = re.compile(
    r"(?:辩护人|辩护律师|被告人|上诉人|公诉机关|检察院|检察员|检察机关)[^。；]{0,30}?"
    r"(?:提出|辩称|辩解|主张|提请|请求|建议|认为)"
)
_FINDS = re.compile(r"经查|经审查|本院认为")  # where the court answers a claim with what it found
# …有立功表现的辩护意见，理由不成立: the mention is what a party claimed
_CLAIMED = re.compile(r"^[^，。；]{0,12}?的(?:辩护|上诉|公诉|量刑)?(?:意见|辩解|理由|主张)")
_REJECTED = re.compile(
    r"不予(?:采纳|采信|支持|认定|认可)|不能成立|不成立|不符|理由不足|不充分|无事实|无法律依据|不能认定|缺乏"
    r"|不构成|不属于|不具有|不应认定"
)
_ACCEPTED = re.compile(r"予以(?:采纳|采信|支持|认定|认可)|成立|属实|可以采纳")
# a denial in the clause just before the circumstance (不能认定为自首, 无前科, 并非起次要作用, 未取得…谅解)
_DENIED = re.compile(r"不(?!仅|但|久)|未(?!成年|满)|没有|无(?!论)|并非")
_DENIED_AFTER = re.compile(r"^[^，。；]{0,8}?(?:不成立|不能成立|不予认定|不能认定)")
# a law quoted or named: “…如实供述自己的罪行的，是自首。”, 《…自首和立功…》
_QUOTES = (("“", "”"), ("《", "》"))
_NEAR = 10  # characters before a circumstance a denial reaches
# a prior conviction in a defendant's paragraph: 因犯盗窃罪被判处有期徒刑, 因盗窃被…判处拘役三个月,
# 1980年3月15日犯抢劫罪…被…判处有期徒刑十八年
_CONVICTED = re.compile(r"(?:因|犯)[^。；]{0,40}?被[^。；]{0,30}?判处")
_THIS_CASE = re.compile(r"因本案|涉嫌")
# the reasoning's word for it: 曾因故意犯罪被判处有期徒刑, 曾因犯贩卖毒品罪被判过刑
_PRIOR = re.compile(r"曾(?:经)?因[^。；]{0,40}?(?:判处|判过刑|被判刑)")
# whom a sentence speaks of: 被告人王太典、颜东斌、颜有庭 (each), 二被告人 / 上述被告人 (all of them)
_ALL = re.compile(r"[二两三四五六七八九十各全]名?被告人|上述被告人|全部被告人|上诉人[^，。；]{0,12}均")
_JOINS = re.compile(r"^[、和及与]?(?:被告人)?$")


@dataclass(frozen=True)
class Circumstance:
    answer: str  # YES / NO, or the sentences weighed (a "which" question)
    answer_type: str  # yes / no / sentence
    units: list[tuple[str, str]]  # (segment_id, sentence) the answer rests on
    silent: bool = False  # NO because the judgment states no such circumstance


def asked_circumstance(question: str) -> str | None:
    """The circumstance a question asks whether the defendant had ("自首", "前科" …), "which" for one
    asking which circumstances the court weighed, else None."""
    if _WHICH.search(question):
        return "which"
    if not ZH_WHETHER.search(question) or _WEIGHS_ARGUMENT.search(question):
        return None
    return next((name for name, asked, _ in _ASKED if asked.search(question)), None)


def circumstance_answer(question: str, asked: str, blocks: list[Passage]) -> Circumstance | None:
    """The answer from the judgment's blocks to a question about `asked` (asked_circumstance), for the
    defendant the question names, else for any; None unless the blocks are a criminal judgment (刑事 in its
    head) with its defendants' paragraphs and its reasoning (本院认为)."""
    names = defendants(blocks)
    named = [n for n in names if n in question]
    criminal = any(b.block_type == "HEADER" and "刑事" in b.text for b in blocks)
    if not names or not criminal or not any(b.block_type == "OPINION" for b in blocks):
        return None
    who = named[0] if named else None
    if asked == "which":
        return _which(question, blocks, names, who)
    pattern = next(text for name, _, text in _ASKED if name == asked)
    found = _findings(blocks, ("OPINION",), pattern, names, who)
    if asked == "前科" and not found:
        found = _convictions(blocks, who) or [
            (seg, s, True) for seg, s, _ in _findings(blocks, ("OPINION",), _PRIOR, names, who)
        ]
    if not found and asked not in ("前科", "累犯"):
        found = _findings(blocks, ("FACTS",), pattern, names, who)
    if not found:
        weighed = _weighed(blocks, names, who) or _opinion_sentences(blocks)[:1]
        return Circumstance("NO", "no", weighed[:1], silent=True)
    yes = found[0][2]
    return Circumstance("YES" if yes else "NO", "yes" if yes else "no", [(seg, s) for seg, s, _ in found[:3]])


def _findings(
    blocks: list[Passage], kinds: tuple[str, ...], pattern: re.Pattern, names: list[str], who: str | None
) -> list[tuple[str, str, bool]]:
    """(segment_id, sentence, stated) of each sentence of the `kinds` blocks where the court states or
    denies `pattern` of the defendant `who` (of any defendant when None): its own word first, a claim it
    answered after."""
    own, answered = [], []
    said = _said_of(blocks, kinds, names)
    for i, (seg, sentence, whom) in enumerate(said):
        for m in pattern.finditer(sentence):
            quoted = any(
                sentence.count(a, 0, m.start()) > sentence.count(b, 0, m.start()) for a, b in _QUOTES
            )
            if quoted or who is not None and who not in whom(m.start()):
                continue
            stance = _stance(sentence, m.start(), m.end(), said[i + 1][1] if i + 1 < len(said) else "")
            if stance is not None:
                (answered if stance[1] else own).append((seg, sentence, stance[0]))
                break
    return own + answered


def _said_of(blocks: list[Passage], kinds: tuple[str, ...], names: list[str]) -> list[tuple]:
    """(segment_id, sentence, whom(offset)) of the sentences of the `kinds` blocks, where
    whom(offset) gives the defendants a sentence speaks of at `offset`: the last named before it (with
    those listed beside: 被告人王太典、颜东斌), all of them after 二被告人, else those the sentence before
    spoke of, else all."""
    out, last = [], list(names)
    for _, segment_id, sentence in sentences_of([b for b in blocks if b.block_type in kinds]):
        refs = _references(sentence, names)
        out.append((segment_id, sentence, _whom(refs, list(last), names)))
        if refs:
            last = refs[-1][1]
    return out


def _references(sentence: str, names: list[str]) -> list[tuple[int, list[str]]]:
    """(offset, the defendants meant) of each reference to defendants in the sentence, in order; names
    listed together (王太典、颜东斌、颜有庭) make one reference."""
    hits = sorted(
        [(m.start(), m.end(), [n]) for n in names for m in re.finditer(re.escape(n), sentence)]
        + [(m.start(), m.end(), list(names)) for m in _ALL.finditer(sentence)]
    )
    refs: list[tuple[int, int, list[str]]] = []
    for start, end, meant in hits:
        if refs and _JOINS.match(sentence[refs[-1][1] : start]):
            refs[-1] = (refs[-1][0], end, refs[-1][2] + meant)
        else:
            refs.append((start, end, meant))
    return [(start, meant) for start, _, meant in refs]


def _whom(
    refs: list[tuple[int, list[str]]], before: list[str], names: list[str]
) -> Callable[[int], list[str]]:
    def whom(offset: int) -> list[str]:
        prior = [meant for start, meant in refs if start < offset]
        return prior[-1] if prior else before or names

    return whom


def _stance(sentence: str, start: int, end: int, following: str) -> tuple[bool, bool] | None:
    """(whether the circumstance holds, whether it was a party's claim the court answered) for the mention
    at sentence[start:end], or None for a claim the court left unanswered there and in the next sentence."""
    claim = _CLAIM.search(sentence[:start])
    if claim and _FINDS.search(sentence, claim.end(), start):
        claim = None  # …提出的上诉理由，经查，上诉人…主动到公安机关投案，应认定自首: the court's own finding
    if claim or _CLAIMED.match(sentence[end:]):
        reply = sentence[end:]
        for text in (reply, following):
            rejected, accepted = _REJECTED.search(text), _ACCEPTED.search(text)
            if rejected or accepted:
                first = min((m for m in (rejected, accepted) if m), key=lambda m: m.start())
                return first is accepted, True
        return None
    clause = re.split(r"[，,；;：:]", sentence[:start])[-1][-_NEAR:]
    denied = _DENIED.search(clause) is not None or _DENIED_AFTER.match(sentence[end:]) is not None
    return not denied, False


def _convictions(blocks: list[Passage], who: str | None) -> list[tuple[str, str, bool]]:
    """(segment_id, sentence, True) of the prior convictions a defendant's paragraph states (of `who`'s
    paragraph, else any defendant's)."""
    own = [b for owner, b in defendant_paragraphs(blocks) if who is None or owner == who]
    out = []
    for _, segment_id, sentence in sentences_of(own):
        for m in _CONVICTED.finditer(sentence):
            if not _THIS_CASE.search(sentence[max(0, m.start() - 4) : m.end()]):
                out.append((segment_id, sentence, True))
                break
    return out


def _which(question: str, blocks: list[Passage], names: list[str], who: str | None) -> Circumstance | None:
    """The answer to which circumstances were weighed: the reasoning's sentences that weigh the defendant's
    punishment (lighter or heavier as the question asks), joined in the judgment's order."""
    found = _weighed(blocks, names, who, question)
    if not found:
        return None
    return Circumstance("".join(s for _, s in found), "sentence", found)


def _weighed(
    blocks: list[Passage], names: list[str], who: str | None, question: str = ""
) -> list[tuple[str, str]]:
    """(segment_id, sentence) of the reasoning's sentences that weigh the defendant's sentence: a lighter
    or heavier punishment for `who` (any defendant when None), only lighter (or heavier) ones when the
    question asks so."""
    want = (_LIGHTER,) if _LIGHTER.search(question) else (_HEAVIER,) if _HEAVIER.search(question) else ()
    weighs = want or (_LIGHTER, _HEAVIER)
    out = []
    for seg, sentence, whom in _said_of(blocks, ("OPINION",), names):
        hits = [m for p in weighs for m in p.finditer(sentence)]
        if any(who is None or who in whom(m.start()) for m in hits) and not _CLAIM.search(sentence):
            out.append((seg, sentence))
    return out


def _opinion_sentences(blocks: list[Passage]) -> list[tuple[str, str]]:
    return [(seg, s) for seg, s, _ in _said_of(blocks, ("OPINION",), [])]
