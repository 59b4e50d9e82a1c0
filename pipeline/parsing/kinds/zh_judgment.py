"""Chinese court documents (裁判文书): 判决书, 裁定书, 调解书.

The genre is strongly formulaic: each section opens with a stock phrase (经审理查明, 本院认为,
判决如下 …) and the sections come in a fixed order, so typing is a small state machine over paragraphs:
a paragraph that opens with a marker starts that section, any other paragraph continues the current one.
Markers that a flattened text buries mid-paragraph (本院认为 after a 。) split the paragraph first.
"""

from __future__ import annotations

import datetime as dt
import re

from pipeline.parsing.layout import clean_line
from pipeline.parsing.spans import Span, split_spans
from pipeline.records import BlockType as T
from pipeline.records import DocKind, DocMeta, Party

KIND = DocKind.ZH_JUDGMENT

DOC_TYPES = "判决书|裁定书|调解书|决定书|通知书|支付令"
_OPINION_START = r"(?:本院(?:经审查|经审理|再审|二审|审查)?认为|本院(?:评判|评析|分析)如下)"
_FACTS_START = r"(?:经审理查明|本院(?:经审理|二审|再审)?查明|另查明|再查明|上述事实|以上事实)"

# Split points: before a section marker that starts a sentence, and after 判决如下：.
_CUTS = re.compile(
    rf"[。；！？]\s*(?={_OPINION_START}|{_FACTS_START}|如不服本(?:判决|裁定))"
    r"|(?:判决|裁定|调解|决定)如下[:：]"
    r"|规定[，,]\s*(?:判决|裁定)[:：]"
)

_ROLE = (
    r"(?:原审|一审|二审)?(?:附带民事诉讼)?"
    r"(?:公诉机关|抗诉机关|自诉人|被告人|原告人|原告|被告|被上诉人|上诉人|再审申请人|申请再审人|被申请人|申请人"
    r"|申请执行人|被执行人|第三人|案外人|申诉人|被申诉人|异议人|法定代表人|法定代理人|委托诉讼代理人|委托代理人"
    r"|诉讼代理人|指定代理人|辩护人|负责人|诉讼代表人|代表人|经营者|投资人|罪犯)"
)
# 被告人自报安旭: a name the defendant gave (自报, 自称), not one on record
_PARTY = re.compile(
    rf"^({_ROLE})(?:[（(][^）)]{{0,30}}[）)])?[:：]?\s*(?:自报|自称)?([^，,。；;：:（(\s]{{1,40}})"
)
_NOT_PARTY = re.compile(
    r"一案|向本院|本院于|本院适用|提起公诉|提起上诉|审理终结|立案|受理|诉讼请求|诉称|辩称|辩解|起诉书|指控|认为"
    r"|异议|认罪|请求"
)

_HEADER = re.compile(
    rf"^(?:.{{0,60}}(?:{DOC_TYPES})|.{{2,40}}?(?:人民法院|法院|法庭)|[（(〔\[]\d{{4}}[）)〕\]].{{1,30}}?号.?)$"
)
# a title naming every party before the document's kind: "原告贺付忠与被告陈益明、…等机动车交通事故责任纠纷一审民事判决书"
_LONG_TITLE = re.compile(rf"^[^。；：:]{{60,200}}(?:{DOC_TYPES})$")
_PROCEDURE = re.compile(
    r"^(?:原审|一审|原判|原一审)|一案|审理终结|提起公诉|提起上诉|提出上诉|立案|受理|组成合议庭|开庭|简易程序|普通程序"
)
# The courts below: their findings and reasoning are procedural history (原审情况), not this court's.
_PROCEDURE_ANYWHERE = re.compile(
    r"^(?:原审|一审|原一审|原二审|原判)[^。，,；]{0,30}?(?:查明|认定|认为|审理)"
    r"|^(?!本院)[^。，,；]{2,30}?(?:人民法院|法院)(?:一审|二审|再审|经审理|审理)?(?:查明|认定|认为)"
)
_DEFENSE = re.compile(
    r"^[^。]{0,60}?(?:辩称|辩解|辩护意见|答辩意见|辩护人提出|辩护人认为|未作答辩|未答辩|没有答辩|未提交答辩)"
)
_CLAIMS = re.compile(
    r"^[^。]{0,60}?(?:诉称|诉讼请求|起诉请求|上诉请求|上诉称|上诉理由|申请再审称|再审请求|申诉称|抗诉认为"
    r"|指控(?:[:：，,]|称)|公诉机关认为|检察院认为|请求判令|请求：)"
)
_FACTS = re.compile(
    rf"^(?:{_FACTS_START}|[^。]{{0,20}}?(?:审理查明|审理认定|查明[:：，,]|认定事实如下|证据如下|(?:上述|以上)(?:犯罪)?事实)"
    # 认罪认罚 judgments: the defendant admitting the charged facts is where the court fixes them.
    r"|[^。]{0,40}?对(?:起诉书?|公诉机关)?指控的?(?:犯罪)?事实[^。]{0,30}?(?:没有|无|不持)异议"
    r"|[^。]{0,30}?(?:自愿认罪认罚|认罪认罚且|查明的事实|经法庭审理|审理确认|确认(?:法律)?事实|认定(?:如下|以下)?事实)"
    # evidence: 当事人围绕诉讼请求提交了证据 / 原告为证实其主张提交以下证据 / 本院组织质证、认证
    r"|[^。]{0,40}?(?:提交|提供|出示)了?(?:以下|如下|下列)?(?:证据|书证)|[^。]{0,40}?本院(?:依法)?(?:组织|认证|采信|认定如下))"
)
# 本院认为 may follow a short lead-in clause (综上所述，本院认为 / 关于第一个争议焦点，本院认为).
# This court adopting the facts below, or taking new evidence, is its own fact-finding.
_FACTS_ADOPTED = re.compile(
    r"^[^。]{0,40}?(?:事实(?:予以)?确认|事实(?:基本)?一致|予以确认[。，,]?$)|^(?:本院)?(?:二审|再审)(?:审理)?(?:期间|中)"
)
# Items of a judgment below that a paragraph just quoted (…判决：一、…；驳回…).
_QUOTED_ITEM = re.compile(r"^(?:[一二三四五六七八九十]+、|驳回|撤销|维持|变更|案件受理费|如果未按|如未按)")
_LEADS = ((T.DEFENSE, _DEFENSE), (T.CLAIMS, _CLAIMS), (T.FACTS, _FACTS))
_FACTS_LEAD = re.compile(rf"^{_FACTS_START}")
_OPINION = re.compile(rf"^(?:[^。，,；]{{0,20}}[，,])?{_OPINION_START}")
_VERDICT = re.compile(r"(?:判决|裁定|调解|决定)如下[:：]?$|(?:判决|裁定)[:：]$")
_NOTICE = re.compile(
    r"^(?:如不服本|如果未按|如未按|本判决为终审判决|本裁定为终审裁定|本判决(?:书)?送达|本裁定(?:书)?送达|本调解书"
    r"|本裁定书?自|本判决书?自|本判决发生法律效力|对本裁定不服|申请执行的期限)"
)
_CN_DATE = r"[〇○零一二三四五六七八九]{4}年[一二三四五六七八九十]{1,2}月[一二三四五六七八九十]{1,3}日"
_SIGNATURE = re.compile(
    rf"^(?:(?:审\s*判\s*长|审\s*判\s*员|代理审判员|人民陪审员|陪\s*审\s*员|书\s*记\s*员|代书记员|法官助理|速\s*录\s*员"
    rf"|执\s*行\s*员)\s*\S{{0,12}}|{_CN_DATE}|本件与原本核对无异|（此页无正文）)"
)
_APPENDIX = re.compile(
    r"^(?:附[:：件录]|附\s*(?:相关|本案|本判决|本裁定)|本案(?:所)?(?:引用|适用|依据|判决所依据)的?(?:主要)?法律|相关法律条文"
    r"|(?:本案)?(?:所)?(?:适用|引用)的?法律(?:条文|规定))"
)

# a published case report (典型案例) may name no court in words these cues know: its section headings tell it
_SCORE_CUES = re.compile(
    rf"人民法院|{DOC_TYPES}|本院认为|审判员|审判长|书记员|[（(]\d{{4}}[）)].{{1,20}}号|判决如下|裁定如下"
    r"|基本案情|典型意义|裁判要[点旨]|裁判理由"
)

# States in the order a judgment goes through them; typing never moves back past the body.
_TAIL = (T.VERDICT, T.NOTICE, T.SIGNATURE, T.APPENDIX)


def score(text: str, language: str) -> float:
    if language != "zh":
        return 0.0
    hits = len({m.group(0)[:3] for m in _SCORE_CUES.finditer(text[:12000])})
    return min(1.0, hits / 5)


# Section headings of case reports (人民法院案例库, 指导性案例) and of some judgments.
_HEADINGS = {
    "基本案情": T.FACTS,
    "案情": T.FACTS,
    "事实": T.FACTS,
    "裁判理由": T.OPINION,
    "裁判要旨": T.OPINION,
    "裁判要点": T.OPINION,
    "裁判结果": T.VERDICT,
    "关联索引": T.APPENDIX,
    "相关法条": T.APPENDIX,
    "关键词": T.HEADER,
}
_HEADING = re.compile(rf"^(?:[一二三四五六七八九十]+、)?({'|'.join(_HEADINGS)})[:：]?")


def _classify(piece: str, state: T) -> T:
    """The section this paragraph belongs to, given the section the previous one was in."""
    if len(piece) <= 12 and (h := _HEADING.match(piece)):
        return _HEADINGS[h.group(1)]
    if piece.startswith("关键词"):
        return T.HEADER
    if state is T.APPENDIX:
        return state
    head = piece[:80]
    in_tail = state in _TAIL or state is T.OPINION
    if in_tail and _APPENDIX.match(head):
        return T.APPENDIX
    if len(piece) <= 40 and _SIGNATURE.match(piece) and state is not T.HEADER:
        return T.SIGNATURE
    if state is T.SIGNATURE:
        return T.APPENDIX if len(piece) > 60 else T.SIGNATURE
    if state is not T.HEADER and _NOTICE.match(head):
        return T.NOTICE
    if _OPINION.match(head):
        return T.OPINION
    if state is T.OPINION and _FACTS_ADOPTED.match(head):
        return T.FACTS  # an appeal quoting the reasoning below (…本院认为) before fixing its own facts
    if state in (T.VERDICT, T.OPINION):
        return state  # the reasoning discusses claims, defences and facts without leaving the reasoning
    if state in (T.HEADER, T.PARTIES):
        line = clean_line(piece)
        if state is T.HEADER and (len(piece) <= 60 and _HEADER.match(line) or _LONG_TITLE.match(line)):
            return T.HEADER  # 民 事 判 决 书; the site's title of a suit with many parties
        if _PARTY.match(head) and not _NOT_PARTY.search(piece[:200]):
            return T.PARTIES
        if _CLAIMS.match(head) and not _PROCEDURE.search(piece[:120]):
            return T.CLAIMS
        if _PROCEDURE.search(piece[:200]):
            return T.PROCEDURE
    if _FACTS_LEAD.match(head):
        return T.FACTS
    if _FACTS_ADOPTED.match(head):
        return T.FACTS
    if _PROCEDURE_ANYWHERE.match(head) or (state is T.PROCEDURE and _QUOTED_ITEM.match(head)):
        return T.PROCEDURE
    # Several markers can open one paragraph (上述事实，被告人…的供述和辩解); the earliest one names it.
    found = [(m.end(), kind) for kind, rx in _LEADS if (m := rx.match(head))]
    if found:
        return min(found)[1]
    if state is T.HEADER:
        return T.OTHER
    return state


def type_spans(text: str, spans: list[Span]) -> list[Span]:
    spans = split_spans(text, spans, _CUTS)
    pieces = [text[s.start : s.end] for s in spans]
    # Appeals and retrials quote the judgments below (…判决：); only the last such line opens this
    # court's 主文. The paragraph that ends with it still belongs to the reasoning.
    # The statutes appended after the signatures may quote 判决： too, so look only before the tail.
    tail = next(
        (i for i, p in enumerate(pieces) if len(p) <= 40 and _SIGNATURE.match(p) and i > 3), len(pieces)
    )
    last_verdict = max((i for i, p in enumerate(pieces[:tail]) if _VERDICT.search(p)), default=-1)
    state = before = T.HEADER
    for i, (s, piece) in enumerate(zip(spans, pieces, strict=True)):
        if s.type is not None:
            continue
        # A notice inside a quoted judgment below does not end the document: what follows it is read
        # as if the notice were not there.
        kind = _classify(piece, before if state is T.NOTICE and i < tail - 1 else state)
        if kind is not T.NOTICE:
            before = kind if kind is not T.OTHER else before
        s.type = kind
        if kind is not T.OTHER:
            state = T.VERDICT if i == last_verdict and kind not in _TAIL else kind
    _requote(spans, pieces)
    return spans


def _requote(spans: list[Span], pieces: list[str]) -> None:
    """Reasoning that this court's own fact-finding follows was quoted from the court below (which
    calls itself 本院 too): it is procedural history."""
    types = [s.type for s in spans]
    last_start = max(
        (i for i, p in enumerate(pieces) if types[i] is T.OPINION and _OPINION.match(p)), default=-1
    )
    facts = max((i for i in range(last_start) if types[i] is T.FACTS), default=-1)
    for i in range(facts):
        if types[i] is T.OPINION:
            spans[i].type = T.PROCEDURE


# ---- metadata ------------------------------------------------------------------------------------

# a court's name, never run from a date or a prosecutor into it: "…2日汕尾市人民检察院向汕尾市中级人民法院"
_COURT = re.compile(
    r"(?<![\d０-９〇○零一二三四五六七八九十])(?:(?![院向由被])[\u4e00-\u9fff]){2,30}?(?:人民法院|法院|法庭)"
)
CASE_NO = re.compile(r"[（(〔\[]\d{4}[）)〕\]][^\s，。,；;、]{1,30}?号")
_DOC_TYPE = re.compile(DOC_TYPES)
# 关联索引: "二审：重庆市第五中级人民法院（2024）渝05民终11440号民事判决（2024年12月31日）"
_INSTANCE = re.compile(
    r"(?m)^(?:一审|二审|再审|再审审查|复核|执行|终审)[:：]\s*([\u4e00-\u9fff]{2,30}?人民法院)\s*"
    r"([（(]\d{4}[）)][^\s，。；]{1,30}?号)[^\n（(]{0,12}[（(](\d{4})年(\d{1,2})月(\d{1,2})日[）)]"
)
# a case report's people as its text names them: "被告人王某，", "被告人沈某帅犯盗窃罪"
_REPORTED_NAME = re.compile(
    r"(被告人|罪犯|原告|被告|上诉人|申请人)([\u4e00-\u9fff]{1,2}某[\u4e00-\u9fff]{0,2}?)(?=[，,。、（(：:\s]|犯|因|与|诉|系)"
)
# 案由 as the court site files it: 生命权、健康权、身体权纠纷, 劳动争议, 执行异议之诉, 盗窃(罪)
_CAUSE = re.compile(r"([^\s，。、；与和诉及（(）)][^\s，。；与和诉及（(）)]{1,24}?(?:纠纷|争议|之诉|罪))")
_ORG_END = re.compile(
    r"^.*(?:有限公司|公司|分公司|支公司|银行|支行|分行|集团|委员会|合作社|中心|厂|局|院|所|店|处)"
)
_ASIDE = re.compile(r"[（(]以下简称[^）)]*[）)]")
_CAUSE_IN_TEXT = re.compile(
    r"(?:犯|涉嫌)([^\s，。、；]{1,20}?罪)|因?([^\s，。；与和诉及][^\s，。；与和诉及]{1,24}?(?:纠纷|争议|之诉))一案"
)
CN_DATE_PARTS = re.compile(
    r"([〇○零一二三四五六七八九]{4})年([一二三四五六七八九十]{1,2})月([一二三四五六七八九十]{1,3})日"
)
_HAN = re.compile(r"[\u4e00-\u9fff]")
_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九")} | {"○": 0, "零": 0}
_JUDGE_ROLE = re.compile(r"^(?:审\s*判\s*长|审\s*判\s*员|代理审判员|人民陪审员|陪\s*审\s*员)\s*")


def _cn_number(s: str) -> int:
    if "十" not in s:
        return int("".join(str(_DIGITS[c]) for c in s))
    tens, _, ones = s.partition("十")
    return (_DIGITS[tens] if tens else 1) * 10 + (_DIGITS[ones] if ones else 0)


def cn_date(s: str) -> dt.date | None:
    m = CN_DATE_PARTS.search(s)
    if not m:
        return None
    try:
        return dt.date(_cn_number(m.group(1)), _cn_number(m.group(2)), _cn_number(m.group(3)))
    except (ValueError, KeyError):
        return None


def extract_meta(text: str, spans: list[Span]) -> tuple[DocMeta, str | None]:
    meta = DocMeta()
    by_type: dict[T, list[str]] = {}
    for s in spans:
        by_type.setdefault(s.type, []).append(text[s.start : s.end])
    header = [clean_line(h) for h in by_type.get(T.HEADER, [])]
    head_text = "\n".join(header) or text[:300]
    title = next((h for h in header if _DOC_TYPE.search(h) and len(h) > 6), None)
    kind_line = next((h for h in header if _DOC_TYPE.search(h) and len(h) <= 6), None)
    court_line = next((h for h in header if _COURT.fullmatch(h)), None)
    if title is None and kind_line and court_line:
        title = court_line + kind_line  # 内蒙古自治区高级人民法院 + 民事裁定书
    if title is None:  # a case report's heading, or the first short line with Chinese in it
        first = [clean_line(text[s.start : s.end]) for s in spans[:5]]
        title = next((t for t in first if len(t) <= 60 and _HAN.search(t) and not CASE_NO.fullmatch(t)), None)
    if m := _COURT.search(head_text):
        meta.court = m.group(0)
    if m := CASE_NO.search(head_text) or CASE_NO.search(text[:2000]):
        meta.case_number = m.group(0)
    if m := _DOC_TYPE.search(head_text):
        meta.doc_type = m.group(0)
    for line in by_type.get(T.PARTIES, []):
        if pm := _PARTY.match(line):
            meta.parties.append(Party(name=pm.group(2), role=pm.group(1)))
    signature = by_type.get(T.SIGNATURE, [])
    for line in signature:
        if jm := _JUDGE_ROLE.match(line):
            name = re.sub(r"\s+", "", line[jm.end() :])
            if name:
                meta.judges.append(name)
    for line in reversed(signature):
        if d := cn_date(line):
            meta.date = d
            break
    # a report's title names its series before the case: "指导案例19号：赵春明等诉…纠纷案"
    case_title = re.split(r"[：:]", title)[-1] if title else None
    meta.cause = _cause(case_title, by_type.get(T.PROCEDURE, []), meta.parties)
    if instances := _INSTANCE.findall(text[-3000:]):
        # a case report (案例库) names its courts only in 关联索引: the last instance decided the case
        court, number, year, month, day = instances[-1]
        meta.court = meta.court or court
        meta.case_number = number
        meta.date = meta.date or _day(year, month, day)
        meta.cause = meta.cause or _reported_charge(title, text)
        meta.parties = meta.parties or _reported_parties(title, meta.cause, text)
    return meta, title


def _reported_parties(title: str | None, cause: str | None, text: str) -> list[Party]:
    """A case report's parties, whose names it gives only in its title and text, anonymised: the suit's
    sides from its title ("唐某纯诉陈某智、陈某勇等赡养纠纷案": 原告 唐某纯; 被告 陈某智, 陈某勇), else the
    defendants its text names (被告人沈某帅)."""
    if title and cause and (m := re.match(rf"^(.+?)诉(.+?)(?:{re.escape(cause)})", title)):
        sides = [
            (role, re.sub("等$", "", names).split("、"))
            for role, names in zip(("原告", "被告"), m.groups(), strict=True)
        ]
        return [Party(name=n, role=role) for role, names in sides for n in names if 2 <= len(n) <= 20]
    found = dict.fromkeys(name for role, name in _REPORTED_NAME.findall(text) if role == "被告人")
    return [Party(name=n, role="被告人") for n in found]


def _reported_charge(title: str | None, text: str) -> str | None:
    """A criminal case report's charges from its title, its people taken out: "沈某帅盗窃、王某抢劫案" →
    盗窃、抢劫."""
    if not title or not title.endswith("案"):
        return None
    rest = title[:-1]
    for name in sorted({name for _, name in _REPORTED_NAME.findall(text)}, key=len, reverse=True):
        rest = rest.replace(name, "")
    rest = re.sub(r"^、+|、+$", "", re.sub(r"、{2,}", "、", rest))
    return rest if 2 <= len(rest) <= 20 and "某" not in rest else None


def _day(year: str, month: str, day: str) -> dt.date | None:
    try:
        return dt.date(int(year), int(month), int(day))
    except ValueError:
        return None


def _cause(title: str | None, procedure: list[str], parties: list[Party]) -> str | None:
    names = sorted({p.name for p in parties if p.name}, key=len, reverse=True)  # 袁某甲 before 袁某
    if title:
        stripped = title
        for name in names:
            stripped = stripped.replace(name, " ")
        if m := _CAUSE.search(stripped):
            return _bare_cause(m.group(1))
    splitter = re.compile("|".join([_ROLE, *map(re.escape, names)]))
    for para in procedure:
        if m := _CAUSE_IN_TEXT.search(_ASIDE.sub("", para)):
            # 因与被申请人何某某民间借贷纠纷一案 → 民间借贷纠纷: drop the parties named before it
            # … and the number of the case it was decided in: 陈国强与苗根表（2014）甬慈浒商初字第21号民间借贷纠纷
            return _bare_cause(CASE_NO.split(splitter.split(m.group(1) or m.group(2))[-1])[-1]) or None
    return None


def _bare_cause(found: str) -> str:
    """The cause alone: not the parties run into it (…有限公司劳动争议, 张三等离婚纠纷, 罪犯某某运输毒品罪), and
    a charge as the court site files it, without 犯 … 罪."""
    cause = _ORG_END.split(found)[-1] or found  # an organisation the party lines did not name exactly
    cause = re.split(r"等(?!就业)|罪犯[^、]{1,4}?(?=[^、]{2,}罪$)", cause)[-1].lstrip(
        "、"
    )  # 平等就业权纠纷 whole, 卫德平等机动车… cut
    if cause.endswith("罪"):
        cause = re.sub(r"^(?:犯|涉嫌)", "", cause)[:-1]
    return cause
