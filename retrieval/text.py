"""Text as the search and the answers cut it: BM25 terms (jieba words for Chinese, stemmed lower-case words
for English, stopwords dropped) and sentences."""

from __future__ import annotations

import re
from functools import cache

import jieba
import Stemmer

from pipeline.paths import user_cache_dir
from pipeline.sentences import period_continues

# A run of CJK ideographs, or a run of latin letters/digits; everything else (punctuation, spaces) splits.
WORD_RUNS = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[A-Za-z0-9][A-Za-z0-9'_-]*")
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# a Chinese question asking whether (是否被宣告缓刑, 法院是否支持…, 判决了吗)
ZH_WHETHER = re.compile(r"是否|有没有|有无|是不是|吗")
# an English question's asking words, auxiliaries and pronouns, which the stopword list keeps: "were" and
# "which" are in many a sentence, and an answer need hold none of them (stemmed as `terms` stems them)
QUESTION_WORDS = frozenset(
    "what when where which who whom whose why how is are was were be been do doe did has have had shall will "
    "would can could may might must he she it they we you i his her its their our your him them".split()
)
# a numbered paragraph opens a sentence too ("… insured against". 3. On arrival …), unless the number is a
# reference's ("see para. 12. The", "s. 4. It")
_REFERENCE_ABBREVIATIONS = "para paras p pp s ss no art sec cl r rr ch vol fig".split()
_EN_SENTENCE = re.compile(
    r"(?<=[a-z)\]\"'”])[.!?](?=\s+[A-Z“\"(])|(?<=[a-z)\]\"'”])"
    + "".join(rf"(?<!\b{a})(?<!\b{a.title()})" for a in _REFERENCE_ABBREVIATIONS)
    + r"[.!?](?=\s+\d{1,3}\.\s+[A-Z“\"(])"
)
# a full stop after a figure or a capital ("… in 2018. On", "… under the PSED. The", "… Mr Beard QC. He")
# ends a sentence unless the segmenter's rule says it continues one (an initial, "U.S.", an item's number)
# or it closes the number of a paragraph or heading, quoted or not ("“32. Subject to …", "2.4. Treatment")
_EN_FIGURE_STOP = re.compile(r"(?<=[0-9A-Z])\.(?=\s+[A-Z“\"(])")
# capitals go on after a capital's full stop in a citation or a number ("WIS. STAT. § 66", "NO. E30MA931")
_CAPITALS_GO_ON = re.compile(r"\s+[A-Z0-9]{2,}(?:[.\s]|$)")
_ITEM_NUMBER = re.compile(r"(?:(?:^|\n)\s*[“\"‘'(\[]*|[.:;]\s+[“\"‘'(\[]+)\d{1,3}(?:\.\d{1,3})*$")
_ZH_SENTENCE = re.compile(r"(?<=[。！？；])")
# a full stop that ends no sentence: a title before a name (Mr. Hale), a company's suffix before the name it
# is defined by ("Newegg Inc. (“Newegg”), a Delaware corporation")
_TITLE_STOP = re.compile(r"\b(Mr|Mrs|Ms|Dr|Messrs|Hon)\.$")
_COMPANY_STOP = re.compile(r"\b(Inc|Corp|Co|Ltd|Bros|L\.L\.C|L\.P|N\.V|S\.A|A\.G)\.$")
_DEFINED = re.compile(r"\s*[(“\"]")


@cache
def jieba_module():
    jieba.setLogLevel(60)  # its dictionary-loading chatter goes to stderr otherwise
    # its dictionary cache would go to the shared temp directory, where another user could plant one
    jieba.dt.tmp_dir = str(user_cache_dir())
    jieba.initialize()
    return jieba


@cache
def stemmer():
    return Stemmer.Stemmer("english")


@cache
def stopwords() -> frozenset[str]:
    # lazy, a start-up cost: bm25s adds ~0.15 s to `import retrieval.text` (measured)
    from bm25s.stopwords import STOPWORDS_CHINESE, STOPWORDS_EN

    return frozenset(STOPWORDS_EN) | frozenset(STOPWORDS_CHINESE)


def terms(text: str) -> list[str]:
    """BM25 terms of a text in any mix of Chinese and English.

    Chinese runs go through jieba's search mode, which also emits the shorter words inside a long one
    (房产证 → 房产, 房产证), so a query word still matches a longer compound in a document.
    """
    stop = stopwords()
    out: list[str] = []
    latin: list[str] = []
    for m in WORD_RUNS.finditer(text):
        run = m.group()
        if HAN.match(run):
            out.extend(w for w in jieba_module().lcut_for_search(run) if w not in stop)
        else:
            w = run.lower()
            if w not in stop:
                latin.append(w)
    if latin:
        out.extend(stemmer().stemWords(latin))
    return out


def non_overlapping(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """(start, end, label) phrases in text order, the longest kept where several start together and any
    that overlaps one kept before it dropped."""
    kept: list[tuple[int, int, str]] = []
    for a, b, label in sorted(found, key=lambda c: (c[0], -(c[1] - c[0]))):
        if not kept or a >= kept[-1][1]:
            kept.append((a, b, label))
    return kept


def joined(names: list[str]) -> str:
    """Names as a sentence lists them: "A", "A and B", "A, B and C"."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def ends_sentence(text: str, cut: int) -> bool:
    """Whether a full stop just before `cut`, followed by what could open a sentence, ends one."""
    before = text[max(0, cut - 8) : cut]
    if _TITLE_STOP.search(before):
        return False
    return not (_COMPANY_STOP.search(before) and _DEFINED.match(text, cut))


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of a passage; a leading paragraph number stays with its sentence."""
    cuts = sorted(
        {
            0,
            len(text),
            *(m.end() for m in _EN_SENTENCE.finditer(text) if ends_sentence(text, m.end())),
            *(m.end() for m in _EN_FIGURE_STOP.finditer(text) if _figure_ends(text, m.start())),
            *(m.end() for m in _ZH_SENTENCE.finditer(text)),
        }
    )
    out = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        while a < b and text[a].isspace():
            a += 1
        if a < b:
            out.append((a, b))
    return out


def _figure_ends(text: str, stop: int) -> bool:
    if period_continues(text, stop, stop + 1) or _CAPITALS_GO_ON.match(text, stop + 1):
        return False
    return not _ITEM_NUMBER.search(text, max(0, stop - 16), stop)


def sentence_around(text: str, a: int, b: int) -> str:
    """The sentence(s) of `text` holding characters [a, b)."""
    cuts = sentences(text)
    start = next((x for x, y in cuts if x <= a < y), a)
    end = next((y for x, y in cuts if x < b <= y), b)
    return text[start:end]


# the rest of a number that a token boundary cut ("人民币172|,000元", "3|.5万元"): thousands, decimals, unit
_NUMBER_REST = re.compile(r"(?:[,，]\d{3}(?!\d))+(?:\.\d+)?(?:[万亿]?元)?|\.\d+(?:[万亿]?元)?")


def whole_number_end(text: str, b: int) -> int:
    """`b` moved past the rest of the number that text[:b] ends inside, if it does."""
    m = _NUMBER_REST.match(text, b) if b and text[b - 1].isdigit() else None
    return m.end() if m else b


def span_chars(text: str, offsets: list[tuple[int, int]], span: tuple[int, int]) -> tuple[int, int]:
    """[a, b) of `text` under the token `span` (`offsets`: the tokens' characters), ending with the number
    its last token cuts."""
    return offsets[span[0]][0], whole_number_end(text, offsets[span[1]][1])
