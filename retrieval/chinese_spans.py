"""The shapes of typed answers in Chinese judgments: which court, who holds an office in the case, when,
how long, which case number, which procedure.

A Chinese question that names the type of its answer (哪个法院, 审判长是谁, 何时, 判处有期徒刑多久, 案号)
can be answered by a phrase of that type's shape: a court's name ends in 人民法院, a date reads
2023年9月27日 or 二〇二二年十二月九日, a term counts years, months or days, a case number is (2025)内民申6418号,
the name of a judge, a clerk or an agent follows its office (审判长王学雷, 委托诉讼代理人：张宇，…), and a
procedure is one the law names (简易程序, 普通程序).
`zh_span_kind` reads the type from the question and `zh_candidates` finds the phrases; the search for the
best one is `retrieval.english_spans.typed_span`'s, over the same passages. Who-questions about a party
or a witness are left to the reader: a name has no shape in Chinese text. A question asking the law a
ruling rests on (`asks_law`) is a sentence question: its answer cites the articles applied
(`cites_law_applied`).
"""

from __future__ import annotations

import re

from pipeline.records import segment_place
from retrieval.text import jieba_module, non_overlapping

_NUMERAL = "〇零一二三四五六七八九十百两"
_ZH_KINDS = [
    ("case number", r"案号|文号"),
    ("court", r"(哪个|哪家|哪一?级|(?<![为凭])什么|(?<!为)何)法院|法院是(哪|什么)"),
    ("date", r"何时|什么时[间候]|哪一?[天年日]|(哪|几)月|日期"),
    ("duration", r"多久|多长|(几|多少)(年|个月|天|日|小时|周)|期限"),
    ("procedure", r"(什么|哪种|何种|哪一?种)(审判|诉讼)?程序|程序是(什么|哪)"),
    ("injury", r"损伤程度|伤情|伤势|伤残等级|几级伤残|构成(什么|何种|哪种)伤"),
    ("age", r"多大年纪|多大岁数|几岁|多少岁|年龄|年纪"),
    (
        "office",
        r"(审判长|审判员|陪审员|书记员|法官助理|代理人|辩护人|法定代表人|负责人|公诉人)"
        r"[^，。？?]{0,4}(是谁|是哪|是何人|有谁|叫什么)",
    ),
]
ZH_KINDS = frozenset(kind for kind, _ in _ZH_KINDS)
_QUESTION_KINDS = [(kind, re.compile(p)) for kind, p in _ZH_KINDS]

# an office and its holder's name: 裁判文书 space them out on the signature lines (审　判　长　　杨方宁)
_OFFICE_WORDS = (
    "审判长 代理审判员 审判员 人民陪审员 书记员 法官助理 委托诉讼代理人 诉讼代理人 委托代理人 代理人 辩护人 "
    "法定代表人 负责人 公诉人".split()
)
_OFFICES = "|".join(r"\s*".join(word) for word in _OFFICE_WORDS)
_OFFICE_LEAD = rf"^\s*(?:{_OFFICES})[：:]?\s*"  # a line opening with an office, up to its holder's name
# (question, line): a question about an office reads the lines naming that office, however spaced
ZH_ROLE_LINES = [(re.compile(word), re.compile(r"\s*".join(word))) for word in _OFFICE_WORDS] + [
    # this case's number is the line under the document's title, not a number it cites (新检刑诉（2013）147号)
    (re.compile(r"案号"), re.compile(r"^\s*[（(]\d{4}[）)][^\n]{2,30}号\s*$", re.M)),
    (  # the date of this judgment is the date line above its clerk's name
        re.compile(
            r"(判决|裁定|裁判|宣判)书?的?(日期|时间)|(本案|本判决|本裁定)[^，。？]{0,4}(何时|哪一?天|日期)"
        ),
        re.compile(r"^\s*[〇零一二三四五六七八九]{4}\s*年[^\n]{1,6}月[^\n]{0,4}日?\s*$", re.M),
    ),
]
_PLACE = r"[\u4e00-\u9fff]{1,9}?(?:省|自治区|市|地区|自治州|州|盟|县|区|旗)"
_SHAPES = {
    "court": [
        rf"(?:{_PLACE}){{1,4}}(?:第[{_NUMERAL}]+)?(?:高级|中级|铁路运输|海事|知识产权|互联网|金融)?人民法院",
        r"最高人民法院",
    ],
    "date": [
        r"\d{4}年\d{1,2}月(?:\d{1,2}日)?",
        rf"[〇零一二三四五六七八九]{{4}}年[{_NUMERAL}]{{1,2}}月(?:[{_NUMERAL}]{{1,3}}日)?",
        r"\d{4}-\d{1,2}-\d{1,2}",
    ],
    "duration": [
        rf"(?<![\d{_NUMERAL}])(?:[\d{_NUMERAL}]{{1,3}}|\d{{1,3}})个?(?:年|月|日|天|小时|周)"
        rf"(?:[零又]?[\d{_NUMERAL}]{{1,3}}个?月)?(?!\d)",
    ],
    "case number": [r"[（(]\d{4}[）)][\u4e00-\u9fff\d\-]{2,24}?号"],
    "procedure": [r"(?:普通|简易|速裁|特别|小额诉讼|督促|公示催告|审判监督|第二审)程序"],
    # the grades of a forensic injury report (人体损伤程度鉴定标准) and of a disability (伤残等级)
    "injury": [
        r"轻微伤|(?:轻|重)伤(?:[一二12]级)?|(?:[一二三四五六七八九十]|10|[1-9])级伤残"
        r"|伤残(?:等级为)?(?:[一二三四五六七八九十]|10|[1-9])级"
    ],
    "age": [rf"(?<![\d.])(?:\d{{1,3}}|[{_NUMERAL}]{{1,3}})周?岁(?:(?:\d{{1,2}}|[{_NUMERAL}]{{1,3}})个月)?"],
    # a line of the parties or of the signature opens with the office: in running text the words after it
    # are seldom a name (其辩护人提出，…); two holders of one office are listed with 、 (辩护人卢晓、李惠惠)
    "office": [
        rf"{_OFFICE_LEAD}(?P<name>[\u4e00-\u9fff](?:\s?[\u4e00-\u9fff]){{0,3}}(?:、[\u4e00-\u9fff]{{2,4}})*)"
        r"(?=[，,。；;、（(\s]|$)"
    ],
}
_PATTERNS = {kind: [re.compile(p, re.M) for p in ps] for kind, ps in _SHAPES.items()}
# a court's name is read back from 人民法院 over words that are places or court levels: the words before
# it (不服, 通过本院或者直接向, 发生法律效力) are no part of it
_PLACE_WORD = re.compile(
    r".*(省|自治区|市|地区|自治州|州|盟|县|区|旗|法院)|第[一二三四五六七八九十]+|中级|高级|人民|"
    r"铁路运输|海事|知识产权|互联网|金融"
)
_FUNCTION_CHARS = frozenset("向于由经在至到和与及的或并从自往对按依将被把其、")
# a suffix jieba cuts off alone (江南|省): the word before it is the place
_BARE_SUFFIX = frozenset("省 市 县 区 州 盟 旗 自治区 自治州 地区".split())
_OFFICE = re.compile(_OFFICE_LEAD)
# "X的代理人": the party X whose agent, counsel or representative is asked for
_OWNED = re.compile(
    r"([^，。？?]{1,20}?)的?(?:委托诉讼代理人|诉讼代理人|委托代理人|代理人|辩护人|法定代表人|负责人)"
)
_ASKER = re.compile(r"^(?:本案|请问)")
_LAW_Q = re.compile(
    r"(依据|依照|根据|适用|援引|引用)了?(哪些|什么|哪|何)[^，。？]{0,4}(法律|法条|条文|规定|条款)|法律依据|"
    r"(哪些|哪|什么)(法律|法条|条文)"
)
_LAW_CITED = re.compile(r"《[^》]{2,40}》[^。；]{0,30}?第[^，。；、]{1,12}条")
# the basis opens the sentence or one of its clauses (根据本案的犯罪事实，…，依照《刑法》第…条之规定，判决如下)
_LAW_BASIS = re.compile(r"(?:^|[，,；;])[^《。，,]{0,8}?(依照|依据|根据|按照)《|^\W*《(?!.*规定)")


_PENALTY_BEFORE = re.compile(r"(?:有期徒刑|拘役|管制)$")


def zh_span_kind(question: str) -> str | None:
    """What a Chinese question asks for, among ZH_KINDS, or None (a how-much, what or why question)."""
    return next((kind for kind, pattern in _QUESTION_KINDS if pattern.search(question)), None)


def zh_candidates(text: str, kind: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of the phrases of `text` that can answer a `kind` question, in text order,
    longest first where they overlap; an office's phrase is the name alone (审判长王学雷 → 王学雷)."""
    found = []
    for pattern in _PATTERNS[kind]:
        for m in pattern.finditer(text):
            a, b = m.span()
            if kind == "court":
                a = b - _court_length(text[a:b])
            elif kind == "office":
                a = m.start("name")
            elif kind == "duration" and (text[a - 1 : a] in ("年", "月") or "每" in text[max(0, a - 3) : a]):
                continue  # a month of a year (2021年10月), a day of a month (9月27日), a rate (每逾期一日)
            elif kind == "duration" and (penalty := _PENALTY_BEFORE.search(text[max(0, a - 4) : a])):
                a -= len(penalty[0])  # 被判了多少年 → 有期徒刑七年六个月: the term is of that penalty
            if b - a >= 2:
                found.append((a, b, kind))
    return non_overlapping(found)


def owner_bonus(question: str, units: list[tuple[str, str]]) -> list[float]:
    """Per (segment_id, line or sentence) unit: 1 for an office's line listed under the line of the party
    the question names (何某某的委托诉讼代理人是谁？: the agents under 何某某's line, not those of the other side
    listed above it), else 0; all 0 when the question names no party's office. Units are read in the
    document's order (segment ids `doc:n`), whatever order they were searched in."""
    m = _OWNED.search(question)
    owner = m and _ASKER.sub("", m[1]).strip()
    out, under = [0.0] * len(units), False
    for i in sorted(range(len(units)), key=lambda i: segment_place(units[i][0])):
        is_office = bool(_OFFICE.match(units[i][1]))
        under = under if is_office else bool(owner) and owner in units[i][1]
        out[i] = float(is_office and under)
    return out


def _court_length(name: str) -> int:
    """How many characters at the end of `name` (a match ending in 人民法院) are the court's own name: jieba's
    words read back while they are places or court levels, or a lone character that is no function word
    (增|城区, a place jieba cuts in two)."""
    n, bare = 0, False
    for word in reversed(jieba_module().lcut(name)):
        lone = len(word) == 1 and word not in _FUNCTION_CHARS
        if not (bare or lone or _PLACE_WORD.fullmatch(word)):
            break
        n, bare = n + len(word), word in _BARE_SUFFIX
    return n


def asks_law(question: str) -> bool:
    """Asks the law a ruling rests on (本案依据哪些法律条文？ 法律依据是什么？): its answer is a sentence."""
    return bool(_LAW_Q.search(question))


def cites_law_applied(sentence: str) -> bool:
    """Cites the articles a ruling applies (依照《…》第…条之规定, or an index line of them), not an article
    quoted in passing (《刑法》第二百六十九条规定：“…”)."""
    return bool(_LAW_CITED.search(sentence) and _LAW_BASIS.search(sentence))
