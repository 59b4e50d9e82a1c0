"""Criminal cases for the article head: reading them from either corpus layout, the charges a case is
accused of, and the special-part 刑法 article each charge falls under.

    load_criminal(path, limit=None) -> list[CriminalCase]

- the `judge_criminal` layout (JSON lines with `text` = the prosecution's facts, `la` = the articles
  applied, optionally `fd` = the whole judgment, parsed for the court's part), or
- any JSONL corpus of judgments `ldx parse` reads (`clcr_cases`, `wenshu_mixed`): its criminal judgments,
  parsed, with the facts the predict stage reads (retrieval.predict.facts) and as articles the 刑法
  articles the OPINION and VERDICT cite (what `la` holds in judge_criminal: 194 of its first 200 cases
  agree exactly).

A case carries its facts and, where the file has the whole judgment, the court's reasoning and sentence
with every citation cut (`retrieval.predict.facts.court_text`): the two views an article head reads.

A charge named in the accusation (公诉机关指控…构成盗窃罪, 以诈骗罪追究…) points to its special-part
article: learned from the verdicts of training cases (`charge_articles`), and otherwise found in the
articles' own texts (`StatuteIndex`, criminal_law_articles.jsonl), where the charge's wording opens the
article that defines it (故意杀人的，处… is art. 232).
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pipeline.analysis.consistency import CHARGE, cited_articles
from pipeline.config import ParseConfig
from pipeline.errors import CorruptDocument
from pipeline.parsing import build, iter_documents
from pipeline.parsing.text import from_text
from retrieval.predict.facts import COURT_PART, court_text, facts_text, is_criminal_judgment, reads

# 构成盗窃罪 / 以诈骗罪追究 / 涉嫌故意伤害罪 / 犯交通肇事罪: the words that name the charge a case is
# accused of. The 犯 of 侵犯 opens no charge (侵犯公民个人信息罪 is one), and a charge may join its acts
# with 、 (生产、销售假药罪, 拐卖妇女、儿童罪; `charge_parts` splits those that name two charges).
ACCUSED = re.compile(
    r"(?:以|构成|(?<![侵触])犯|涉嫌|触犯)(?!前款|本款|上述|该)((?:侵犯|[^\s，,。；;：:（）()“”犯罪以]){1,24}罪)"
)
# 曾因犯盗窃罪 / 因犯抢劫罪被判处: an earlier conviction, not the charge of this case
_EARLIER = ("曾", "因")
SPECIAL_PART = 102  # 分则 opens at art. 102


@dataclass
class CriminalCase:
    case_id: str
    facts: str
    articles: list[int]
    full: str = ""  # the whole judgment (`fd`, or the parsed judgment's text), when the file has it
    court: str = ""  # its OPINION and VERDICT, citations cut (facts.court_text); "" without `full`

    def text(self, view: str) -> str:
        """What a head reading `view` ("facts" or "judgment") reads of this case."""
        return reads(self.facts, self.court, view)


def read_jsonl(path: str | Path) -> Iterator[dict]:
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    raise CorruptDocument(str(path), f"line {n} is not JSON ({e.msg})") from None


def load_criminal(path: str | Path, limit: int | None = None) -> list[CriminalCase]:
    """The cases of a judge_criminal file, or the criminal judgments of a judgment corpus (see module)."""
    path = Path(path)
    first = next(iter(read_jsonl(path)), None)
    if not isinstance(first, dict) or "la" not in first:
        return _parsed_cases(path, limit)
    cases = []
    for n, row in enumerate(read_jsonl(path)):
        if limit is not None and n >= limit:
            break
        if not isinstance(row, dict) or "text" not in row or "la" not in row:
            raise CorruptDocument(str(path), f"record {n + 1} lacks the judge_criminal fields text and la")
        case_id, full = str(row.get("text_id", n)), row.get("fd") or ""
        if not isinstance(full, str):
            raise CorruptDocument(str(path), f"record {n + 1}: fd is not a text")
        court = (
            court_text(build(from_text(full, case_id), str(path), case_id, ParseConfig()))
            if full.strip()
            else ""
        )
        cases.append(CriminalCase(case_id, row["text"], [int(a) for a in row["la"]], full, court))
    return cases


def _parsed_cases(path: Path, limit: int | None) -> list[CriminalCase]:
    cases = []
    for doc in iter_documents(path, ParseConfig(), []):
        if limit is not None and len(cases) >= limit:
            break
        # a first-instance or appeal *judgment* (判决书); rulings (裁定书) decide procedure, not articles
        if not is_criminal_judgment(doc) or "判决" not in (doc.title or doc.text[:200]):
            continue
        cited = sorted({a for b in doc.blocks if b.type in COURT_PART for a, _, _ in cited_articles(b.text)})
        facts = facts_text(doc)
        if cited and facts:
            cases.append(CriminalCase(doc.doc_id, facts, cited, doc.text, court_text(doc)))
    if not cases:
        raise CorruptDocument(
            str(path), "neither the judge_criminal layout nor a corpus of criminal judgments"
        )
    return cases


def accused_charges(text: str) -> list[str]:
    """The charges `text` names as accused or convicted (盗窃罪, 故意伤害罪), in order, each once; a
    charge of an earlier conviction (曾因犯盗窃罪被判处…) is not one of them."""
    found = (
        m.group(1)
        for m in ACCUSED.finditer(text)
        if not (text[m.start()] == "犯" and text[m.start() - 1 : m.start()] in _EARLIER)
    )
    return list(dict.fromkeys(found))


def charge_parts(charge: str) -> list[str]:
    """A charge joined with 、 as the charges it may name (盗窃、抢劫罪 → 盗窃罪, 抢劫罪); a charge
    without 、 as itself."""
    if "、" not in charge:
        return [charge]
    return [part + "罪" for part in charge.removesuffix("罪").split("、") if part]


# The sentencing circumstances facts name, which decide the general-part articles a judgment applies:
# 罚金 (arts. 52, 53), 缓刑 (72, 73), 自首 and 坦白 (67), 累犯 (65), 共同犯罪 with its 主犯 and 从犯
# (25–27), 未遂 (23), 立功 (68), forfeiture (64), 数罪并罚 (69) and what else weighs in a sentence.
CIRCUMSTANCES = [
    re.compile(p)
    for p in (
        "罚金", "缓刑", "自首", "投案", "如实供述|坦白", "认罪认罚|具结", "累犯", "刑满释放|曾因",
        "共同犯罪", "伙同|共谋|结伙|合伙", "主犯", "从犯", "未遂", "中止", "立功", "追缴|没收",
        "退赔|退赃|退还", "违法所得|赃款|作案工具", "数罪并罚", "赔偿", "谅解", "未成年|不满十八",
        "醉酒|酒后", "管制", "拘役", "有期徒刑", "无期徒刑|死刑", "剥夺政治权利", "毒品", "销售|贩卖",
    )
]  # fmt: skip
# 被告人张某、被告人李某甲: the defendants a text names (a second one makes a joint crime likely)
_DEFENDANT = re.compile(
    r"被告人([\u4e00-\u9fa5某×ＸX]{1,4}?)(?=[，,、。；和与及因于在等系的犯涉将到经从向被以为已]|$)"
)


def circumstance_features(text: str) -> list[float]:
    """What `text` says of the sentencing circumstances: one flag per `CIRCUMSTANCES` pattern, the
    number of defendants (a quarter each, up to four) and whether there are several, whether it names
    several charges, and whether it is the prosecution's account alone (公诉机关指控…, as in
    judge_criminal) rather than a whole judgment's facts."""
    flags = [1.0 if p.search(text) else 0.0 for p in CIRCUMSTANCES]
    defendants = {m.group(1) for m in _DEFENDANT.finditer(text)}
    return [
        *flags,
        min(len(defendants), 4) / 4,
        float(len(defendants) >= 2),
        float(len(accused_charges(text)) >= 2),
        float(text.lstrip().startswith("公诉机关")),
    ]


def charge_articles(cases: list[CriminalCase], min_support: int = 2) -> dict[str, list[int]]:
    """Which special-part articles each convicted charge comes with: a special-part article that
    appears with a charge in most of its cases, seen at least `min_support` times."""
    seen: dict[str, int] = {}
    pairs: dict[tuple[str, int], int] = {}
    for c in cases:
        verdict = c.full.partition("判决如下")[2]
        for charge in {m.group(1) for m in CHARGE.finditer(verdict)}:
            seen[charge] = seen.get(charge, 0) + 1
            for a in {a for a in c.articles if a >= SPECIAL_PART}:
                pairs[charge, a] = pairs.get((charge, a), 0) + 1
    table: dict[str, list[int]] = {}
    for (charge, a), n in sorted(pairs.items()):
        if n >= min_support and n / seen[charge] >= 0.5:
            table.setdefault(charge, []).append(a)
    return table


class StatuteIndex:
    """The special-part articles' texts, looked up by a charge's wording.

    A charge (故意杀人罪) is defined where its wording opens the article (故意杀人的，处…) or its first
    clause (以暴力、胁迫或者其他方法强制猥亵他人…); the article where the wording comes earliest is the
    one, and a tie (盗窃 opens arts. 127, 210 and 264) answers nothing rather than a guess."""

    def __init__(self, texts: dict[int, str]):
        self.texts = {a: t for a, t in texts.items() if a >= SPECIAL_PART}

    @classmethod
    def read(cls, path: str | Path) -> StatuteIndex:
        texts = {}
        for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                texts[int(row["text_id"])] = str(row["text"])
            except (ValueError, KeyError, TypeError):
                raise CorruptDocument(str(path), f"line {n} is not an article (text_id, text)") from None
        return cls(texts)

    def article_of(self, charge: str) -> int | None:
        stem = charge.removesuffix("罪")
        if len(stem) < 2:
            return None
        hits = sorted((t.find(stem), a) for a, t in self.texts.items() if stem in t)
        # the wording must open the article or its first sentence, not be mentioned in passing
        hits = [(pos, a) for pos, a in hits if pos <= 40]
        if not hits or (len(hits) > 1 and hits[1][0] == hits[0][0]):
            return None
        return hits[0][1]
