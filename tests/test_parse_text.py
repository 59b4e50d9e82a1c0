"""Plain text and JSONL inputs, the block/offset contract, and Chinese judgment typing on real corpora."""

from __future__ import annotations

import gzip
import json
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pipeline.config import ParseConfig
from pipeline.parsing import build, corpus_windows, iter_documents, parse_file
from pipeline.parsing.kinds.zh_judgment import _bare_cause
from pipeline.parsing.text import from_text
from pipeline.records import BlockType as T
from pipeline.records import DocKind, doc_id_for_bytes, doc_id_for_file


def check_contract(doc) -> None:
    for i, b in enumerate(doc.blocks):
        assert b.block_idx == i
        assert doc.text[b.char_start : b.char_end] == b.text
        assert b.text and b.text == b.text.strip()
    starts = [b.char_start for b in doc.blocks]
    assert starts == sorted(starts)
    assert all(a.char_end <= b.char_start for a, b in zip(doc.blocks, doc.blocks[1:], strict=False))


def _judge_criminal(shared_data):
    with gzip.open(shared_data / "zh/judgments/judge_criminal.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_text_file_blocks_and_meta(tmp_path, shared_data):
    record = _judge_criminal(shared_data)[0]
    path = tmp_path / "judgment.txt"
    path.write_text(record["fd"], encoding="utf-8")
    doc = parse_file(path)
    check_contract(doc)
    assert doc.doc_id == doc_id_for_file(path)
    assert doc.kind is DocKind.ZH_JUDGMENT and doc.language == "zh"
    assert doc.meta.court and doc.meta.court.endswith("人民法院")
    assert doc.meta.case_number and re.fullmatch(r"（\d{4}）.+号", doc.meta.case_number)
    assert doc.meta.doc_type == "判决书"
    assert doc.meta.date is not None and 2000 < doc.meta.date.year < 2030
    assert any(p.role == "被告人" for p in doc.meta.parties)
    # a charge as 裁判文书网 files its 案由: the charge's name without 犯 … 罪
    assert doc.meta.judges and doc.meta.cause == "盗窃"
    assert all(b.page is None and b.bbox is None for b in doc.blocks)


def test_jsonl_one_document_per_line(tmp_path, shared_data):
    records = _judge_criminal(shared_data)[:3]
    lines = [json.dumps({"id": r["text_id"], "body": r["fd"]}, ensure_ascii=False) for r in records]
    path = tmp_path / "corpus.jsonl"
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    docs = list(iter_documents(path, ParseConfig(jsonl_text_field="body")))
    assert [d.doc_id for d in docs] == [doc_id_for_bytes(line.encode()) for line in lines]
    keyed = list(iter_documents(path, ParseConfig(jsonl_text_field="body", jsonl_id_field="id")))
    assert [d.doc_id for d in keyed] == [doc_id_for_bytes(str(r["text_id"]).encode()) for r in records]
    assert keyed[0].source.endswith(f"#{records[0]['text_id']}")
    for d in docs:
        check_contract(d)


def test_jsonl_bad_lines_collected(tmp_path, shared_data):
    record = _judge_criminal(shared_data)[1]
    path = tmp_path / "mixed.jsonl"
    good = json.dumps({"text": record["fd"]}, ensure_ascii=False)
    path.write_text("\n".join([good, "{not json", json.dumps({"other": 1}), good]), encoding="utf-8")
    errors: list = []
    docs = list(iter_documents(path, errors=errors))
    assert len(docs) == 2 and len(errors) == 2
    assert all(str(path) in str(e) for e in errors)


_LINES = st.one_of(
    st.text(alphabet="本院认为判决如下但是however ", min_size=1, max_size=20).map(
        lambda t: json.dumps({"text": t}, ensure_ascii=False)
    ),
    st.sampled_from(["", "  ", "{not json", '{"other": 1}', '{"text": "\u3000"}']),
)


@settings(max_examples=80, deadline=None)
@given(st.lists(_LINES, min_size=1, max_size=14), st.booleans(), st.integers(min_value=1, max_value=5))
def test_windows_of_a_jsonl_file_read_what_the_whole_file_reads(tmp_path_factory, lines, ends, size):
    """Read window by window, a corpus gives the same documents, sources (line numbers) and errors, in
    order, as read whole, whatever its blank or bad lines and whether its last line ends."""
    path = tmp_path_factory.mktemp("windows") / "corpus.jsonl"
    data = ("\n".join(lines) + ("\n" if ends else "")).encode()
    assume(data)  # an empty file is refused before it is parsed
    path.write_bytes(data)
    whole_errors: list = []
    whole = [(d.doc_id, d.source) for d in iter_documents(path, errors=whole_errors)]
    windows = corpus_windows(path, size)
    n_lines = data.count(b"\n") + (not data.endswith(b"\n"))
    assert [w.start for w in windows] == list(range(0, n_lines, size))
    assert windows[-1].stop == n_lines
    parts, part_errors = [], []
    for w in windows:
        parts += [(d.doc_id, d.source) for d in iter_documents(path, errors=part_errors, window=w)]
    assert parts == whole
    assert [str(e) for e in part_errors] == [str(e) for e in whole_errors]


def test_only_a_plain_jsonl_corpus_is_cut_into_windows(tmp_path):
    line = json.dumps({"text": "本院认为，被告人构成盗窃罪。"}, ensure_ascii=False) + "\n"
    (tmp_path / "a.jsonl").write_text(line * 5, encoding="utf-8")
    with gzip.open(tmp_path / "a.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write(line * 5)
    (tmp_path / "a.txt").write_text(line * 5, encoding="utf-8")
    (tmp_path / "b.jsonl").write_bytes(b"%PDF-1.7 not a corpus")
    assert [(w.start, w.stop) for w in corpus_windows(tmp_path / "a.jsonl", 2)] == [(0, 2), (2, 4), (4, 5)]
    assert all(corpus_windows(tmp_path / n, 2) is None for n in ("a.jsonl.gz", "a.txt", "b.jsonl"))
    with pytest.raises(ValueError, match="plain JSONL"):
        list(iter_documents(tmp_path / "a.jsonl.gz", window=corpus_windows(tmp_path / "a.jsonl", 2)[1]))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from("本院认为判决如下：。，经审理查明 \n\u3000abc1"), max_size=30),
        max_size=12,
    )
)
def test_offsets_hold_for_any_text(parts):
    text = "".join(parts)
    if not text.strip():
        return
    doc = build(from_text(text, "gen"), "gen", "0" * 16, ParseConfig())
    check_contract(doc)


def _zh_judgments(shared_data):
    for r in _judge_criminal(shared_data):
        yield "judge_criminal", r["fd"]
    with gzip.open(shared_data / "zh/judgments/clcr_cases.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["title"].endswith("判决书"):
                yield "clcr", r["text"]


_OPINION_AT = re.compile(r"(?:[^。，,；]{0,20}[，,])?本院\S{0,4}认为")


def test_zh_judgment_sections_in_order(shared_data):
    """Every judge_criminal full document and every clcr 判决书: FACTS < OPINION < VERDICT, and the
    reasoning opens at 本院认为 (allowing a short lead-in such as 综上所述，)."""
    config = ParseConfig()
    n = ordered = has_marker = opens_at = 0
    for source, text in _zh_judgments(shared_data):
        doc = build(from_text(text, source), source, "0" * 16, config)
        types = [b.type for b in doc.blocks]
        n += 1
        if all(t in types for t in (T.FACTS, T.OPINION, T.VERDICT)):
            ordered += types.index(T.FACTS) < types.index(T.OPINION) < types.index(T.VERDICT)
        if "本院认为" in text:
            has_marker += 1
            first = next((b for b in doc.blocks if b.type is T.OPINION), None)
            opens_at += bool(first and _OPINION_AT.match(first.text))
    print(
        f"\nzh judgments: {n} docs; FACTS<OPINION<VERDICT {ordered / n:.2%}; "
        f"OPINION opens at 本院认为 {opens_at}/{has_marker} = {opens_at / has_marker:.2%}"
    )
    assert n > 1600
    assert opens_at / has_marker >= 0.99
    assert ordered / n >= 0.95


@pytest.mark.parametrize("name", ["empty.txt", "blank.txt"])
def test_empty_text_is_typed_error(tmp_path, name):
    from pipeline.errors import EmptyDocument

    path = tmp_path / name
    path.write_text("" if name == "empty.txt" else "  \n\n ", encoding="utf-8")
    with pytest.raises(EmptyDocument, match=name):
        parse_file(path)


def test_a_cause_is_read_without_the_parties_run_into_it():
    assert _bare_cause("张某、李某等离婚纠纷") == "离婚纠纷"
    assert _bare_cause("沂水县某超市有限公司劳动争议") == "劳动争议"
    assert _bare_cause("平等就业权纠纷") == "平等就业权纠纷"  # 等 inside a cause's own name
    assert _bare_cause("卫德平等机动车交通事故责任纠纷") == "机动车交通事故责任纠纷"  # a name ending in 平
    assert _bare_cause("犯盗窃罪") == "盗窃"


def test_a_long_title_naming_every_party_is_the_header_not_a_party():
    text = (
        "原告贺付忠与被告陈益明、南京市江宁区邦邦物流货运中心、中华联合财产保险股份有限公司南京中心支公司等"
        "机动车交通事故责任纠纷一审民事判决书\n南京市栖霞区人民法院\n民 事 判 决 书\n(2017)苏0113民初284号\n"
        "原告：贺付忠，男，1970年10月4日出生，汉族。\n被告：陈益明，男，1977年5月20日出生，汉族。\n"
        "原告贺付忠与被告陈益明机动车交通事故责任纠纷一案，本院于2017年1月9日立案后，依法适用简易程序审理。\n"
    )
    doc = build(from_text(text, "title.txt"), "title.txt", "0" * 16, ParseConfig())
    assert doc.blocks[0].type is T.HEADER
    assert [(p.name, p.role) for p in doc.meta.parties] == [("贺付忠", "原告"), ("陈益明", "被告")]


def test_a_name_the_defendant_gave_is_read_without_the_words_saying_so():
    text = (
        "上海市长宁区人民法院\n刑事判决书\n（2018）沪0105刑初655号\n公诉机关上海市长宁区人民检察院。\n"
        "被告人自报安旭，男，1993年2月12日出生，土家族，户籍地贵州省。\n"
    )
    doc = build(from_text(text, "self.txt"), "self.txt", "0" * 16, ParseConfig())
    assert ("安旭", "被告人") in [(p.name, p.role) for p in doc.meta.parties]


def test_a_cause_read_from_the_procedure_leaves_out_the_number_of_the_case_executed():
    text = (
        "陈国强与苗根表执行裁定书\n浙江省慈溪市人民法院\n执 行 裁 定 书\n（2015）甬慈执民字第112-2号\n"
        "申请执行人：陈国强。\n被执行人：苗根表。\n"
        "本院在执行陈国强与苗根表（2014）甬慈浒商初字第21号民间借贷纠纷一案中，申请执行人陈国强自愿撤回申请。\n"
    )
    doc = build(from_text(text, "exec.txt"), "exec.txt", "0" * 16, ParseConfig())
    assert doc.meta.cause == "民间借贷纠纷"


def test_a_reports_court_and_cause_are_not_run_into_from_the_text_or_its_series():
    text = (
        "指导案例19号：赵春明等诉烟台市福山区汽车运输公司卫德平等机动车交通事故责任纠纷案\n"
        "2003年7月2日汕尾市人民检察院向汕尾市中级人民法院提起公诉，指控被告人马某犯贪污罪。\n"
    )
    doc = build(from_text(text, "report.txt"), "report.txt", "0" * 16, ParseConfig())
    assert doc.meta.court == "汕尾市中级人民法院"
    assert doc.meta.cause == "机动车交通事故责任纠纷"
