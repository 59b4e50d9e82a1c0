"""Whose words a sentence holds and a question asks for: the court's ruling, or a party's request or
argument.

A judgment states a sum as claimed and then, often cut down, as awarded; a party's grounds and the court's
reasons stand side by side. `asked_side` reads which side a question wants (法院判决…, 应支付…, "how much
was he ordered to pay" against 原告请求…, "what did the claimant seek"); `is_ruling` and `is_claim` tell a
sentence's side, and `is_ruling_below` a court below's decision that an English appeal reports. `ask`
ranks a reader span from a sentence on the asked side higher (`retrieval.side_prior`), and answers a
question about what a party argued or asked for (`asks_argument`), or what a court below decided
(`asks_ruling_below`), with such a sentence.
"""

from __future__ import annotations

import re

from retrieval.text import HAN

DECISION_BLOCKS = frozenset({"VERDICT"})  # the disposition: 判决如下 items, "I would allow the appeal"
# a ruling reported outside the disposition: a case digest's 一审 and 二审 rulings in its facts
# (…作出…刑事判决：被告人…犯交通肇事罪，判处有期徒刑七个月；…民事裁定：驳回上诉，维持原判), or an item of one
# quoted there (二、陈某智于本判决生效之日起十日内…)
_ZH_RULING = re.compile(r"(判决|裁定|决定)[：:]|判处|维持原判|于本判决生效之日")
# …but not the sentence a prosecutor proposes (建议对其判处有期徒刑六个月至八个月, 量刑建议)
_ZH_PROPOSED = re.compile(r"建议[^，。；]{0,8}判处|量刑建议")
# …and an English court's own: "we affirm", "I would order", "the appeal is dismissed"
_RULES = "order|affirm|reverse|vacate|remand|dismiss|allow|refuse|quash|set aside|modify"
_RULED = "affirmed|reversed|vacated|remanded|dismissed|allowed|refused|quashed|set aside|modified"
_EN_RULING = re.compile(
    rf"\b(I|we)\s+((?:would|now|therefore|accordingly|also|hereby)\s+)*({_RULES})\b"
    rf"|\b(is|are|be)\s+(hereby\s+)?({_RULED})\b",
    re.I,
)
# …or printed bare, as American courts close ("AFFIRMED.", "Judgment affirmed.", "Order reversed, etc."), or a
# request decided in so many words ("His requested relief is denied")
_EN_BARE_RULING = re.compile(
    r"^\W*(?:¶\s*\d+\s*)?(?:the\s+)?"
    r"(?:(?:judgment|order|decision|petition|motion|appeal)s?\s+(?:is\s+|are\s+)?)?"
    rf"(?:{_RULED}|denied|granted)\b",
    re.I,
)
# a ruling only supposed ("if only the contract claims are reversed", "only if … will its decision be
# reversed"); not a judge's "if my Lord agrees, the appeal should be dismissed"
_EN_CONDITION = re.compile(r"\b(?:if|unless|whether)\b(?![^,.;]{0,40}\bagrees?\b)", re.I)
# "why the counterclaims ought not to be dismissed"; a sentence opening a quotation
_NEGATED = re.compile(r"\bnot\s+(?:to\s+)?$", re.I)
_QUOTED = re.compile(r"^\s*[“\"]")
_EN_REQUEST_RULED = re.compile(
    r"\b(?:relief|motion|petition|application|request)s?\s+(?:is|are)\s+(?:hereby\s+)?(?:denied|granted)\b",
    re.I,
)
RULING_BLOCKS = frozenset({"FACTS", "PROCEDURE", "OPINION"})  # not CLAIMS: a party asks for 撤销 … 改判
CLAIM_BLOCKS = frozenset({"CLAIMS", "DEFENSE"})
# a party's request or argument reported in another block (郭某华遂诉至法院，请求判令…, "the appellant contends")
_ZH_CLAIMED = re.compile(
    r"请求|诉请|要求|诉至|诉称|辩称|上诉称|抗诉称|申请再审称|主张|抗辩|辩护意见|指控|提出|建议|辩护人认为"
)
# the judgment's notice of appeal (如不服本判决，可在…提出上诉) is no party's words
_NOT_SAID = frozenset({"NOTICE"})
# …but not where the court answers one (辩护人提出的辩护意见…本院予以采纳)
_ZH_COURT_ANSWERS = re.compile(
    r"本院(认为|予以|不予|采纳|支持|酌)|法院(认为|认定|予以|不予)|予以(采纳|支持|采信)|不予(采纳|支持|采信)|经查|"
    r"(罪名|指控|主张|请求|理由)(不能)?成立"
)
_EN_CLAIMED = re.compile(
    r"\b(claim(s|ed)|seeks?|sought|request(s|ed)|demand(s|ed)|argue[sd]|contend(s|ed)|submit(s|ted))\b", re.I
)

# a court below, named in an English question or sentence ("the district court", "the judge below", in an
# English appeal "the judge"): what it decided is not this court's disposition
_EN_BELOW = re.compile(
    r"\b(district|trial|motion|lower|county|magistrates?'?|crown|family)\s+(court|judge)|\b(judge|court)s? below\b|"
    r"\bfirst instance\b|\bthe (judge|recorder|tribunal)\b(?! of appeal)",
    re.I,
)
_EN_DECIDED = re.compile(
    r"\b(held|found|decided|granted|denied|dismissed|ruled|ordered|concluded|rejected|refused|entered|awarded|"
    r"sentenced|reduced|imposed|overruled|convicted|accepted)\b",
    re.I,
)

# a question naming the court or what it did asks for the ruling, request or not (法院是否支持原告的请求)
_ZH_ASKS_RULING = re.compile(
    r"判决|判令|判处|判赔|裁定|法院|本院|酌定|支持|驳回|最终|应当?(支付|赔偿|返还|承担|给付|偿还|负担)"
)
_ZH_ASKS_CLAIM = re.compile(
    r"要求|请求|诉请|主张|诉称|辩称|辩解|起诉|索赔|索要|指控|"
    r"(上诉|抗诉|再审申请|申请再审|抗辩|辩护|答辩)[^，。？?为]{0,8}?(理由|意见)|(上诉|抗诉|申诉)[^，。？?]{0,3}(怎么说|称)|"
    r"(提出|发表)了?(什么|哪些)(意见|理由|主张)"
)
_APPEALED = re.compile(r"不服[^，。？?]{0,12}?(判决|裁定)")
_EN_ASKS_RULING = re.compile(r"\b(ordered|awarded|sentenced|judgment for)\b", re.I)
# a verb of asking or arguing after its party ("did the claimant seek", not "does claim 3 require"), or a
# party's arguments named
_EN_ASKS_CLAIM = re.compile(
    r"\b(did|does|do|has|have|had)\s+([\w'-]+\s+){1,4}(claim|seek|ask for|request|demand|argue|contend|submit)\b|"
    r"\b(claimed|sought|requested|demanded|argued|contended|submitted|arguments?|submissions?|contentions?)\b|"
    r"\bgrounds? (of|for) (the )?appeal\b",
    re.I,
)
# why a party, not the court, holds or asks something: 公诉机关凭什么认为…, 检察院为什么要求… (被告为什么要赔偿 asks
# the court's reasons)
_PARTY = r"(公诉机关|检察院|检察员|原告|被告人?|上诉人|申请人|辩护人|第三人)"
_ZH_PARTY_WHY = re.compile(
    rf"{_PARTY}[^，。？?]{{0,8}}?(为什么|为何|为啥|凭什么|以什么理由)"
    r"[^，。？?]{0,4}?(认为|要求|主张|指控|起诉|上诉|申请|提出|请求|称)"
    rf"|{_PARTY}[^，。？?]{{0,12}}?(什么|何种|怎样的?)态度"  # 出庭检察员对原判是什么态度
)
# an argument question asks what was argued, not a sum, a person or a date (those stay span questions)
# (in English "what did the appellant argue", not "what benefit had he claimed" nor "which lawyer argued")
_ASKS_WHAT = re.compile(
    r"什么|哪些|(怎么|如何|怎样)(说|辩解|答辩)|^\s*what\s+(did|does|do|has|have|had|was|were|is|are)\b", re.I
)
_ASKS_PHRASE = re.compile(r"多少|几|谁|何时|哪一?天|\b(how much|how many|when|who|whom)\b", re.I)


def is_ruling(block_type: str, sentence: str) -> bool:
    """The disposition, or a ruling reported in the facts, the proceedings or the reasons."""
    if block_type in DECISION_BLOCKS:
        return True
    if block_type not in RULING_BLOCKS:
        return False
    if HAN.search(sentence):
        return bool(_ZH_RULING.search(sentence)) and not _ZH_PROPOSED.search(sentence)
    return bool(_EN_RULING.search(sentence))


def states_ruling(sentence: str) -> bool:
    """An English sentence stating a court's ruling itself ("we affirm", "the appeal is dismissed",
    "AFFIRMED."), not a sentence beside it in the disposition ("In this venue, the Chapel renews its
    claims")."""
    if _QUOTED.match(sentence):  # a tribunal's decision the judgment quotes
        return False
    found = _EN_RULING.search(sentence) or _EN_REQUEST_RULED.search(sentence)
    if found and (
        _EN_CONDITION.search(sentence, 0, found.start()) or _NEGATED.search(sentence, 0, found.start())
    ):
        return False
    return bool(found or _EN_BARE_RULING.match(sentence))


def states_own_ruling(block_type: str, text: str) -> bool:
    """An English passage outside the disposition where the court states its ruling ("Accordingly, we affirm
    the judgment …", "I would dismiss the appeal"): an opinion's conclusion may stand in its reasons."""
    return block_type in RULING_BLOCKS and not HAN.search(text) and states_ruling(text)


def decision_fit(block_type: str, sentence: str) -> float:
    """How well a sentence answers what the court decided: a Chinese ruling 1, wherever it is reported; an
    English court's own ruling in its disposition 1, one it states in its reasons 0.75, and the sentences
    printed beside either ("In this venue, the Chapel renews its claims") 0.5; anything else 0."""
    if HAN.search(sentence):
        return float(is_ruling(block_type, sentence))
    stated = states_ruling(sentence)  # read once: states_own_ruling is this outside the disposition
    if not (is_ruling(block_type, sentence) or (block_type in RULING_BLOCKS and stated)):
        return 0.0
    return 0.5 if not stated else 1.0 if block_type in DECISION_BLOCKS else 0.75


def asks_ruling_below(question: str) -> bool:
    """An English question about what a court below decided ("What did the district court decide?")."""
    return not HAN.search(question) and bool(_EN_BELOW.search(question))


def is_ruling_below(block_type: str, sentence: str) -> bool:
    """A sentence reporting what a court below decided ("the district court sentenced him to eighty-seven
    months"), outside this court's disposition."""
    return block_type not in DECISION_BLOCKS and bool(
        _EN_BELOW.search(sentence) and _EN_DECIDED.search(sentence)
    )


def is_claim(block_type: str, sentence: str) -> bool:
    """A party's words: its own block (CLAIMS, DEFENSE), or a request or argument reported elsewhere; never
    a ruling (驳回原告其他诉讼请求 names a request) or the court's answer to an argument."""
    if is_ruling(block_type, sentence) or block_type in _NOT_SAID:
        return False
    if block_type in CLAIM_BLOCKS:
        return True
    if HAN.search(sentence):
        return bool(_ZH_CLAIMED.search(sentence)) and not court_answers(sentence)
    return bool(_EN_CLAIMED.search(sentence))


def court_answers(sentence: str) -> bool:
    """A Chinese sentence in which the court answers a point (本院认为…, 经查…, 不予采纳, 上诉理由不成立)."""
    return bool(_ZH_COURT_ANSWERS.search(sentence))


def asked_side(question: str) -> str | None:
    """The side a question asks about: "ruling" (what the court ordered), "claim" (what a party asked for
    or argued) or None."""
    zh = bool(HAN.search(question))
    if zh:  # 不服一审判决，上诉理由是什么？ names the judgment appealed, and asks the appeal's grounds
        question = _APPEALED.sub("", question)
    if (_ZH_ASKS_RULING if zh else _EN_ASKS_RULING).search(question):
        return "ruling"
    return "claim" if (_ZH_ASKS_CLAIM if zh else _EN_ASKS_CLAIM).search(question) else None


def on_asked_side(question: str, block_type: str, sentence: str) -> bool:
    """Whether the sentence is on the side the question asks about (`asked_side`)."""
    side = asked_side(question)
    if side is None:
        return False
    return is_ruling(block_type, sentence) if side == "ruling" else is_claim(block_type, sentence)


def asks_argument(question: str) -> bool:
    """A question about what a party argued or asked for (原告的诉讼请求是什么？ 上诉理由是什么？ "What did the
    appellant argue?"), or why a party held or asked it (公诉机关凭什么认为…？): its answer is a party's
    sentence."""
    return _ZH_PARTY_WHY.search(question) is not None or (
        asked_side(question) == "claim"
        and bool(_ASKS_WHAT.search(question))
        and not _ASKS_PHRASE.search(question)
    )
