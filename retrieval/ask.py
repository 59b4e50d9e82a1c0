"""Question answering over an indexed run: retrieve segments, read an answer, cite the sources.

`Asker(out_dir)` loads the run's segments, blocks and documents (latest run of each), builds BM25 over the
segments, the sentence model's arm over its English segments (retrieval.evidence: the vectors `ldx run`
stored in OUT_DIR/index/), the dense arm over the segment-state store when its checkpoint loads, and the
reader head for the encoder; all once, for every question (the states the reader reads are cached too).
`asker.ask(question, k, doc_id)` returns an `Answer` citing pages and boxes. It answers (retrieval.answer)
a question naming a contract clause with the clause head's likeliest sentence of that category, or "none"
with it below the clause rows' bar, one about a patent's front page with the field that states it, and one
asking whether the court granted what was asked with the ruling's items (retrieval.ask_routes); one naming
its answer's type (who, when, how much …; 哪个法院, 审判长是谁, 多久, 案号 …; retrieval.english_spans,
retrieval.chinese_spans) with the phrase of that shape nearest its words in the cited passages and the
document's head; one whose answer is a sentence (a decision, a reason, a patent's claim) with the best
sentence of the cited passages; any other with the reader's most confident answer over the cited segments,
grown to a whole phrase, when its confidence reaches ANSWER_THRESHOLD; else "none" with the best evidence
sentence. Sentences are ranked by their overlap with the question (and the heading they stand under) and for
English its cosine under the sentence model; `Answer.more_evidence` holds the next two.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace
from pathlib import Path

import torch

from pipeline.errors import DocumentError
from pipeline.paths import CLAUSE_HEAD
from pipeline.records import BlockType, Segment, segment_place
from pipeline.store import LATEST, open_duckdb
from pipeline.tokenizer import encode_segment
from retrieval.answer import (
    ANSWER_THRESHOLD,
    Answer,
    Citation,
    Evidence,
    Reading,
    asks_several,
    complete_span,
    evidence_kind,
    fits_question,
    is_wh_question,
    question_kind,
    term_share,
)
from retrieval.ask_models import add_dense_arm, add_sentence_arm, load_asker_reader, sentence_similarity
from retrieval.ask_routes import AnswerRoutes
from retrieval.cache import DocStateCache
from retrieval.clause_questions import MIN_PROBABILITY, ClauseReader
from retrieval.config import RetrievalConfig
from retrieval.covers import Covers
from retrieval.english_spans import TypedSpan, head_passages, span_kind, typed_span
from retrieval.evidence import SentenceVectors
from retrieval.front_questions import FrontPages
from retrieval.hybrid import Filters, HybridIndex, Passage
from retrieval.inject import encode_document
from retrieval.named_documents import AGENTS, DocumentNames
from retrieval.predict.clauses import ClauseHead
from retrieval.reader.questions import asked_clauses, before_asked
from retrieval.reader.runtime import EncodedText
from retrieval.sentence_rank import (
    BLOCK_PRIOR,
    ScoredSentence,
    rank_sentences,
    section_headings,
    with_dispositions,
)
from retrieval.sides import on_asked_side
from retrieval.stage import INDEX_DIR
from retrieval.text import HAN, sentence_around, span_chars


class IndexMissing(DocumentError):
    stage = "ask"


class BadQuestion(DocumentError):
    """A question with nothing to search for (empty, or only punctuation)."""

    stage = "ask"


MAX_K = 100  # citations per answer: the reader reads each, so a huge k only buries the answer
# one clause of a two-clause question answered alone: a phrase, not a sentence's worth (李庆斌, 10000元)
PART_MAX_CHARS = 30
PART_MAX_CHARS_EN = 80  # an English one: "twenty-eight days after the date upon which ventilation is removed"
_CLAUSE_MARK = re.compile(r"[，,。；;：:]")
_ASKS_HOW_MUCH = re.compile(r"多少")  # not 几: 几点 asks a time, and 前一天 holds a numeral
_NUMERAL = re.compile(r"\d|[一二三四五六七八九十百千万两]")


def _case_names(docs: list[tuple]) -> tuple[dict[str, list[str]], dict[str, str]]:
    """(doc_id -> its parties' names, those acting for a party left out; doc_id -> an English judgment's
    short name) of the run's `documents` rows: what a question names a case by (retrieval.named_documents).
    """
    parties = {
        d: [p["name"] for p in ps or [] if not AGENTS.search(p["role"] or "")] for d, *_, ps, _ in docs
    }
    titles = {d: title for d, kind, *_, title in docs if kind == "en_judgment" and title}
    return parties, titles


class Asker(AnswerRoutes):
    """Answers questions over one indexed run; models, indexes and the document-state cache load once and
    serve every question (`Asker(out_dir).ask(question)`)."""

    def __init__(
        self,
        out_dir: str | Path,
        config: RetrievalConfig | None = None,
        checkpoint: str | None = None,
        device: str = "auto",
        reader: Path | None = None,
        clause_min_probability: float = MIN_PROBABILITY,
    ):
        self.out_dir = Path(out_dir)
        self.config = config or RetrievalConfig()
        self.notes: list[str] = []
        if not (self.out_dir / "segments").is_dir():
            raise IndexMissing(
                str(self.out_dir), "no segments table here; run `ldx run INPUT --out OUT_DIR` first"
            )
        con = open_duckdb(self.out_dir)
        seg = con.execute(
            "SELECT segment_id, doc_id, seg_idx, block_idx, CAST(type AS VARCHAR) AS type, text FROM segments "
            + LATEST.format(key="segment_id")
            + " ORDER BY doc_id, seg_idx"
        ).fetchall()
        docs = con.execute(
            "SELECT doc_id, kind, meta.court AS court, meta.date AS date, meta.parties AS parties, title "
            "FROM documents " + LATEST.format(key="doc_id")
        ).fetchall()
        blocks = con.execute(
            "SELECT doc_id, block_idx, page, bbox FROM blocks " + LATEST.format(key="doc_id, block_idx")
        ).fetchall()
        if not seg:
            raise IndexMissing(str(self.out_dir), "the run wrote no segments")
        self.blocks = {
            (d, b): (page, list(bbox) if bbox is not None else None) for d, b, page, bbox in blocks
        }
        passages, self.block_of = _passages(seg, docs)
        self.by_doc: dict[str, list[Passage]] = {}  # a route reads one document's passages per question
        for p in passages:
            self.by_doc.setdefault(p.doc_id, []).append(p)
        self.search_index = HybridIndex(passages, bm25=self.config.bm25, config=self.config)
        self.headings = section_headings(passages)
        self.names = DocumentNames(passages, *_case_names(docs))
        self.fronts = FrontPages(self.out_dir)
        self.covers = Covers(self.out_dir)
        self.sentence_device = "cpu" if device == "auto" else device  # MiniLM is small: CPU unless told
        self.sentences = SentenceVectors(self.config, self.sentence_device)
        index_dir = self.out_dir / INDEX_DIR
        add_sentence_arm(self.search_index, self.config, self.sentence_device, index_dir, self.sentences)
        self.model, self.tokenizer = add_dense_arm(
            self.search_index, self.config, checkpoint, device, index_dir, self.notes
        )
        self.reader, self.model, self.tokenizer = load_asker_reader(
            checkpoint, device, reader, self.notes, (self.model, self.tokenizer)
        )
        self.cache = DocStateCache(self.config.cache_bytes)
        self.clauses = None
        if self.config.clause_answers and CLAUSE_HEAD.is_file():
            self.clauses = ClauseReader(ClauseHead.load(CLAUSE_HEAD), clause_min_probability)

    def doc_states(self, doc_id: str) -> dict[str, torch.Tensor]:
        """segment_id -> [T, d] states of a document read in order with memory; cached for the session."""
        model = self.reader.model  # the reader's own encoder when it was fine-tuned with the head
        device = next(model.parameters()).device
        passages = self.passages_of(doc_id)
        cached = self.cache.get(doc_id, device)
        if cached is None:
            segments = [_segment(p, self.block_of[p.segment_id]) for p in passages]
            ids = [encode_segment(s, self.tokenizer)[0] for s in segments]
            cached = [e.hidden for e in encode_document(model, segments, ids)]
            self.cache.put(doc_id, cached)
        return {p.segment_id: h for p, h in zip(passages, cached, strict=True)}

    def read(self, question: str, citations: list[Citation]) -> Reading | None:
        """The reader's best answer in the cited segments; None when every segment says no answer."""
        q = self.reader.question(question)
        wh = is_wh_question(question)
        best, best_rank = None, -1.0
        for c in citations:
            states = self.doc_states(c.doc_id)[c.segment_id]
            enc = self.tokenizer.hf.encode(c.text, add_special_tokens=False)
            offsets = [tuple(o) for o in enc.offsets]
            hidden = states[states.size(0) - len(enc.ids) :].float().cpu()  # drop the prefix tokens
            pred = self.reader.read(c.text, EncodedText(hidden, offsets, list(enc.ids)), q)
            if not pred.answer or (wh and pred.label != "SPAN"):
                continue  # no answer here, or a bare YES/NO to a who/what question
            if pred.label == "SPAN" and not fits_question(question, pred.answer, c.block_type):
                continue  # a heading's words, or no number for a how-much question
            a, b = span_chars(c.text, offsets, pred.span) if pred.span else (0, len(c.text))
            # ranked by P(answer type) (a span's own probability shrinks with the passage's length: a title's
            # YES/NO would win), weighted by the question's share in the answer's sentence (P(SPAN) alone
            # prefers any fact-like segment) and by its side, the court's or a party's (retrieval.sides)
            sentence = sentence_around(c.text, a, b)
            share = term_share(question, sentence)
            side = self.config.side_prior * on_asked_side(question, c.block_type, sentence)
            rank = pred.type_prob * (0.5 + share + side)
            if rank > best_rank:
                best_rank = rank
                best = Reading(pred.label, pred.answer, pred.type_prob, c.segment_id, a, b, share, pred.parts)
        return best

    def citation(self, segment_id: str, score: float) -> Citation:
        p = self.passage(segment_id)
        page, bbox = self.blocks.get((p.doc_id, self.block_of[segment_id]), (None, None))
        return Citation(p.doc_id, segment_id, p.block_type, page, bbox, round(float(score), 6), p.text)

    def ask(
        self, question: str, k: int = 10, doc_id: str | None = None, filters: Filters | None = None
    ) -> Answer:
        if not any(ch.isalnum() for ch in question):
            raise BadQuestion("question", f"{question[:40]!r} has no words to search for")
        if k < 1:
            raise BadQuestion("question", f"k must be at least 1, not {k}")
        notes = list(self.notes)
        if k > MAX_K:
            notes.append(f"k={k} lowered to {MAX_K}")
            k = MAX_K
        filters = filters or Filters()
        asked, (question, doc_id) = question, self.names.asked_of(question, doc_id, notes)
        if doc_id is not None:
            filters.doc_ids = {doc_id}
            if not self.passages_of(doc_id):
                raise IndexMissing(str(self.out_dir), f"no document {doc_id} in this run")
        hits = self.search_index.search(
            question, k=k, filters=filters, level="segment", rrf_k=self.config.rrf_k
        )
        citations = [self.citation(h.segment_id, h.score) for h in hits]
        doc = doc_id or (citations[0].doc_id if citations else None)  # asked about, else cited first
        if (routed := self.answer_routed(asked, doc_id, doc, citations, notes)) is not None:
            return routed
        # a question naming its answer's type asks for a phrase ("Which judge wrote the judgment?")
        typed_kind = (
            self.config.typed_spans and span_kind(question) is not None and not asks_several(question)
        )
        kind = "span" if typed_kind else question_kind(question)
        reading = None
        if self.reader is None:
            notes.append("no reader for this encoder: only sentence answers and citations")
        elif kind == "span":  # a sentence question is answered from the ranked sentences alone
            reading = self.read(question, citations)
        typed = self.typed(question, doc, citations) if typed_kind else None
        ranking = evidence_kind(question, kind)
        passages = with_dispositions(ranking, citations, self.passages_of(doc) if doc else [])
        similar, weight = sentence_similarity(question, self.search_index, self.sentences, self.config)
        ranked = rank_sentences(question, passages, ranking, similar, self.headings, weight)
        answer, answer_type, conf, evidence = self.shape(question, kind, ranked, reading, typed, notes)
        if evidence is not None and all(c.segment_id != evidence.segment_id for c in citations):
            citations.append(self.citation(evidence.segment_id, 0.0))  # a disposition or party's block
        return Answer(
            asked,
            answer,
            answer_type,
            conf,
            evidence,
            reading and round(reading.confidence, 6),
            reading and reading.segment_id,
            citations,
            self.search_index.arms,
            getattr(self.reader, "checkpoint", None),
            notes,
            self.more_evidence(ranked, evidence),
        )

    def answer_routed(
        self, question: str, doc_id: str | None, doc: str | None, citations: list[Citation], notes: list[str]
    ) -> Answer | None:
        """The question's own route (`route`), or None; for a question asking two things in two clauses
        (审判长是谁，案号是多少？, "When did W80 fire, and who was killed?") where each is answered by a route or
        a phrase of its own, their answers joined, the first's evidence first, unless the whole question's
        route answers both (判了几年，罚金多少？ → the whole penalty)."""
        if not (parts := asked_clauses(question)):
            return self.route(question, doc_id, doc, citations, notes)
        cited, said = list(citations), list(notes)
        answer = self.route(question, doc_id, doc, cited, said)
        part_cited, part_said = list(citations), list(notes)
        answers: list[Answer | None] = []
        for i, part in enumerate(parts):
            found = self.part_answer(part, doc_id, doc, part_cited, part_said)
            if found is None and i > 0 and HAN.search(part):
                # 实际已经付了多少 after 三个被告人答应赔于某多少钱: the clause before says who; joined without a
                # clause mark, it is read as one question
                about = f"{before_asked(parts[i - 1])} {part}"
                found = self.part_answer(about, doc_id, doc, part_cited, part_said)
                found = None if found and answers[-1] and found.answer == answers[-1].answer else found
            answers.append(found)
        texts = [a.answer for a in answers if a is not None and a.answer_type in ("field", "span")]
        if len(texts) == len(parts) and not (answer and all(t in answer.answer for t in texts)):
            # one answer holding another (a penalty and its fine) is enough
            kept = [t for t in dict.fromkeys(texts) if not any(t in u and t != u for u in texts)]
            shown = [a.evidence for a in answers[1:] if a.evidence is not None]
            joined = ("；" if HAN.search(question) else "; ").join(kept)
            answer = replace(answers[0], question=question, answer=joined, more_evidence=shown)
            cited, said = part_cited, part_said
        notes[:], citations[:] = said, cited
        return answer

    def part_answer(
        self, part: str, doc_id: str | None, doc: str | None, citations: list[Citation], notes: list[str]
    ) -> Answer | None:
        """One clause of a question asking two things: its own route's answer, else what `ask` answers it
        with alone in the document asked about (第三人又是谁 after 告的是哪个单位？) where that is a phrase;
        its citations join the question's."""
        if (routed := self.route(part, doc_id, doc, citations, notes)) is not None or doc is None:
            return routed
        found = self.ask(part, doc_id=doc)
        text, first = found.answer, _CLAUSE_MARK.split(found.answer)[0]
        # 死鱼损失是多少 → 15.56万元, not 15.56万元，鉴定费3500元
        if _ASKS_HOW_MUCH.search(part) and _NUMERAL.search(first):
            text = first
        english = not HAN.search(part)
        short = len(text) <= (PART_MAX_CHARS_EN if english else PART_MAX_CHARS)
        # an English phrase may hold commas ("47, Moresby Road, London E5 9LE")
        if found.answer_type != "span" or not short or (not english and _CLAUSE_MARK.search(text)):
            return None  # a clause read alone is answered by a phrase or not at all
        found = replace(found, answer=text)
        seen = {c.segment_id for c in citations}
        citations += [c for c in found.citations if c.segment_id not in seen]
        notes += [f"{part}: {n}" for n in found.notes[len(self.notes) :]]
        return found

    def typed(self, question: str, doc: str | None, citations: list[Citation]) -> TypedSpan | None:
        """The English phrase of the type the question asks for (retrieval.english_spans) in the cited
        passages and the head of the document asked about (else cited first); its segment is cited."""
        cited = {c.segment_id for c in citations}
        head = [(p.segment_id, p.text) for p in head_passages(question, self.passages_of(doc) if doc else [])]
        # the head first, whole and in order (a label's value may stand on the line after it): of two lines
        # alike, the one in the document's head answers a who/when question
        in_head = dict(head)
        passages = head + [(c.segment_id, c.text) for c in citations if c.segment_id not in in_head]
        found = typed_span(
            question, passages, self.sentences.similarity(question), self.config.typed_min_relevance
        )
        if found is not None and found.segment_id not in cited:
            citations.append(self.citation(found.segment_id, 0.0))
        return found

    def shape(
        self,
        question: str,
        kind: str,
        ranked: list[ScoredSentence],
        reading: Reading | None,
        typed: TypedSpan | None,
        notes: list[str],
    ) -> tuple[str, str, float | None, Evidence | None]:
        """(answer, answer_type, confidence, evidence): the best of the `ranked` sentences for a sentence
        question, the English phrase of the type the question asks for, the reader's answer grown to a whole
        phrase when it is confident enough, else "none" with the best sentence."""
        if kind != "span":
            if ranked and ranked[0].score > 0:
                top = ranked[0]
                return (
                    top.text.strip(),
                    "sentence",
                    round(top.score / (1 + BLOCK_PRIOR), 4),
                    self.evidence(top.segment_id, top.text),
                )
            notes.append(f"no sentence of the cited passages answers this {kind} question")
            return "none", "none", None, None
        if typed is not None:
            notes.append(f"the {typed.kind} nearest the question's words (retrieval/english_spans.py)")
            return typed.text, "span", typed.relevance, self.evidence(typed.segment_id, typed.unit)
        if reading is not None and reading.confidence >= ANSWER_THRESHOLD and reading.share > 0:
            conf = round(reading.confidence, 4)
            if reading.label != "SPAN":
                ev = next((s for s in ranked if s.segment_id == reading.segment_id), None)
                return (
                    reading.label,
                    reading.label.lower(),
                    conf,
                    ev and self.evidence(ev.segment_id, ev.text),
                )
            text = self.passage(reading.segment_id).text
            # a question read in parts: each part's span is whole as read; grown, their hull would take in
            # what lies between them
            if reading.parts:
                a, b, answer = reading.start, reading.end, reading.text
            else:
                a, b = complete_span(text, reading.start, reading.end, question)
                answer = text[a:b].strip()
            return answer, "span", conf, self.evidence(reading.segment_id, sentence_around(text, a, b))
        if reading is not None:
            why = (
                f"is below the threshold {ANSWER_THRESHOLD}"
                if reading.share > 0
                else "shares no word with the question"
            )
            notes.append(
                f"no confident answer: the reader's best ({reading.text[:40]!r}, P={reading.confidence:.2f}) {why}"
            )
        return "none", "none", None, self.evidence(ranked[0].segment_id, ranked[0].text) if ranked else None

    def more_evidence(
        self, ranked: list[ScoredSentence], evidence: Evidence | None, n: int = 2
    ) -> list[Evidence]:
        """The `n` best ranked sentences other than the evidence."""
        others = [s for s in ranked if evidence is None or s.text.strip() != evidence.sentence]
        return [self.evidence(s.segment_id, s.text) for s in others[:n]]

    def passages_of(self, doc_id: str) -> list[Passage]:
        """The document's passages (segments), in order."""
        return list(self.by_doc.get(doc_id, ()))

    def passage(self, segment_id: str) -> Passage:
        return self.search_index.passages[self.search_index.row_of[segment_id]]

    def evidence(self, segment_id: str, sentence: str) -> Evidence:
        p = self.passage(segment_id)
        page, bbox = self.blocks.get((p.doc_id, self.block_of[segment_id]), (None, None))
        return Evidence(sentence.strip(), segment_id, page, bbox)


def _passages(seg: list[tuple], docs: list[tuple]) -> tuple[list[Passage], dict[str, int]]:
    """The run's segments as passages carrying their document's kind, court and date, and each one's block."""
    doc_meta = {d: (kind, court, date) for d, kind, court, date, *_ in docs}
    passages, block_of = [], {}
    for sid, doc_id, _, block_idx, btype, text in seg:
        kind, court, date = doc_meta.get(doc_id, (None, None, None))
        passages.append(Passage(sid, doc_id, text, btype, kind, court, date))
        block_of[sid] = block_idx
    return passages, block_of


def _segment(p: Passage, block_idx: int) -> Segment:
    """The segment a passage was cut as, as far as the encoder reads it: its place, type and text."""
    n = segment_place(p.segment_id)[1]
    return Segment(p.doc_id, n, block_idx, BlockType(p.block_type), p.text, 0, 0, 0)


def parse_date(value: str | None) -> dt.date | None:
    return dt.date.fromisoformat(value) if value else None
