"""The questions an `Asker` (retrieval.ask) answers by a route of their own, before any search-and-read:
what a term a contract or patent defines means (retrieval.definition_questions), a contract clause's (the
clause head, retrieval.clause_questions), a patent's front page (retrieval.front_questions), its claim
tree (retrieval.claim_questions) and what it is about, its field and its object
(retrieval.patent_questions), an opinion's cover (retrieval.caption_questions), what a criminal verdict
imposed, the circumstances it weighed and the defendant's custody (retrieval.verdict_questions,
retrieval.circumstance_questions, retrieval.custody_questions), what a Chinese court decided, which items
of the judgment below it upheld or set aside, the costs it ordered, the focus of dispute it drew and the
appeal it allows (retrieval.outcome_questions, retrieval.appeal_items, retrieval.focus_questions,
retrieval.appeal_questions), what a party asked for or argued (retrieval.party_questions), what an
English judgment is about, its grounds of appeal and why the appeal was allowed or dismissed
(retrieval.about_questions, retrieval.grounds_questions, retrieval.why_questions), whether a ground of
appeal succeeded (retrieval.ground_outcomes), whether a court granted what was asked
(retrieval.ruling_questions) and the standard of review an American court applied
(retrieval.review_questions).

`AnswerRoutes` is a part of `Asker`: its methods read the Asker's passages, clause reader, front pages,
citations and evidence.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from pipeline.paths import CLAUSE_HEAD
from pipeline.records import DocKind
from retrieval.about_questions import asks_about, subject
from retrieval.answer import Answer, Citation, Evidence
from retrieval.appeal_items import asked_items, items_answer
from retrieval.appeal_questions import asked_notice, notice_answer
from retrieval.caption_questions import answer_cover, asked_part
from retrieval.circumstance_questions import asked_circumstance, circumstance_answer
from retrieval.claim_questions import asks_tree, claim_tree_answer
from retrieval.clause_questions import answering_first, clause_category, clause_phrase
from retrieval.covers import CoverAnswer
from retrieval.custody_questions import asked_custody, custody_answer
from retrieval.definition_questions import asked_term, definition_answer
from retrieval.digest_questions import asked_section, section_answer
from retrieval.focus_questions import asks_focus, focus_answer
from retrieval.front_questions import about_patent, asked_field
from retrieval.ground_outcomes import asks_ground_outcome, ground_outcome
from retrieval.grounds_questions import asks_grounds, grounds
from retrieval.hybrid import Passage
from retrieval.named_documents import case_named
from retrieval.outcome_questions import blockwise, outcome_answer, outcome_part
from retrieval.party_questions import party_answer, party_part
from retrieval.patent_questions import patent_answer, patent_part
from retrieval.review_questions import asks_review, review_answer
from retrieval.ruling_questions import asks_ruling, ruling_answer
from retrieval.separate_opinions import asked_separate, separate_answer
from retrieval.text import HAN, sentence_around
from retrieval.verdict_questions import VERDICT_BLOCKS, answer_verdict, verdict_part
from retrieval.why_questions import asks_why, reasons
from retrieval.zh_cover_questions import answer_zh_cover, zh_asked_part

_CUSTODY = "read from the defendant's own paragraph (retrieval/custody_questions.py)"
_ITEMS = "read from the ruling's items disposing of the judgment below (retrieval/appeal_items.py)"
_FOCUS = "read from where the court states the focus of dispute (retrieval/focus_questions.py)"
_NOTICE = "read from the judgment's own notice of appeal or finality (retrieval/appeal_questions.py)"
_SECTION = "read from the published case's own section (retrieval/digest_questions.py)"
_SEPARATE = "read from the opinion's separate opinions and votes (retrieval/separate_opinions.py)"
_GROUND = "read from where the Court concludes on that ground (retrieval/ground_outcomes.py)"
_REVIEW = "read from where the opinion states its standard of review (retrieval/review_questions.py)"
_DEFINITION = "read from where the document defines the term (retrieval/definition_questions.py)"
_TREE = "read from the claims' own references to earlier claims (retrieval/claim_questions.py)"
_PATENT = (
    "read from where the patent says what it is about, its field or its object"
    " (retrieval/patent_questions.py)"
)


class JudgmentAnswer(Protocol):
    """What a route reading a Chinese judgment's blocks answers: its text, type and the sentences shown."""

    answer: str
    answer_type: str
    units: list[tuple[str, str]]


class AnswerRoutes:
    """Answers read by a route of their own; a part of `retrieval.ask.Asker`."""

    def clause_answer(
        self, question: str, doc: str | None, citations: list[Citation], notes: list[str]
    ) -> Answer | None:
        """A contract clause question (retrieval.clause_questions) answered by the clause head from `doc`
        (asked about, else cited first): its likeliest sentence of the category holding what the question
        asks for (`answering_first`), or "none" with that sentence as evidence when the head gives it less
        than the clause rows' bar (`clause_min_probability`). None when the question names no category or
        the document is no contract."""
        category = clause_category(question) if self.clauses is not None else None
        if category is None or doc is None:
            return None
        passages = self.passages_of(doc)
        if not passages or passages[0].kind != DocKind.CONTRACT:
            return None
        found, bar = self.clauses.answers(category, doc, passages), self.clauses.min_probability
        if not found:
            return None
        found = answering_first(found, bar, lambda f: clause_phrase(question, f, self.config.typed_spans))
        best = found[0]
        notes.append(f"answered by the clause head ({CLAUSE_HEAD.name}), category {category!r}")
        answer, answer_type, conf = best.answer, "clause", round(best.probability, 4)
        if best.probability < bar:
            p = best.probability
            notes.append(f"no {category} clause found: the likeliest sentence has P={p:.2f}, below {bar}")
            answer, answer_type, conf = "none", "none", None
        evidence = [self.evidence(f.segment_id, f.sentence) for f in found]
        return self.routed(
            question, (answer, answer_type, conf), evidence, round(best.probability, 6), citations, notes
        )

    def route(
        self, question: str, doc_id: str | None, doc: str | None, citations: list[Citation], notes: list[str]
    ) -> Answer | None:
        """The answer of a question with a route of its own (a contract's clause, a patent's front page)."""
        return (
            self.from_english(question, doc, asked_term, definition_answer, _DEFINITION, citations, notes)
            or self.clause_answer(question, doc, citations, notes)
            or self.front_answer(question, doc_id, citations, notes)
            or self.from_english(
                question, doc, asks_tree, claim_tree_answer, _TREE, citations, notes, whole_blocks=True
            )
            or self.from_english(question, doc, patent_part, patent_answer, _PATENT, citations, notes)
            or self.from_english(question, doc, asked_separate, separate_answer, _SEPARATE, citations, notes)
            or self.from_english(question, doc, asks_review, review_answer, _REVIEW, citations, notes)
            or self.from_judgment(question, doc, asked_notice, notice_answer, _NOTICE, citations, notes)
            or self.from_judgment(question, doc, asked_section, section_answer, _SECTION, citations, notes)
            or self.cover_answer(question, doc_id, doc, citations, notes)
            or self.circumstance_answer(question, doc, citations, notes)
            or self.from_judgment(question, doc, asked_custody, custody_answer, _CUSTODY, citations, notes)
            or self.verdict_answer(question, doc_id, doc, citations, notes)
            or self.from_judgment(question, doc, asked_items, items_answer, _ITEMS, citations, notes)
            or self.from_judgment(question, doc, asks_focus, focus_answer, _FOCUS, citations, notes)
            or self.outcome_answer(question, doc, citations, notes)
            or self.party_answer(question, doc_id, doc, citations, notes)
            or self.from_english(
                question, doc, asks_ground_outcome, ground_outcome, _GROUND, citations, notes
            )
            or self.statement_answer(question, doc, citations, notes)
            or self.ruling_answer(question, doc, citations, notes)
        )

    def front_answer(
        self, question: str, doc_id: str | None, citations: list[Citation], notes: list[str]
    ) -> Answer | None:
        """A question about a patent's front page (retrieval.front_questions) answered from the field that
        states it, in the patent asked about, else the one cited first (when the question speaks of a patent
        or that patent is cited first of all)."""
        field = asked_field(question)
        if field is None:
            return None
        docs = list(dict.fromkeys([doc_id] if doc_id else [c.doc_id for c in citations]))
        patents = [d for d in docs if self.passages_of(d)[0].kind == DocKind.PATENT]
        if not patents or (patents[0] != docs[0] and not about_patent(question)):
            return None
        found = self.fronts.answer(field, patents[0])
        note = (
            f"read from the patent's front page (or its record's own fields): its {field}"
            " (retrieval/front_questions.py)"
        )
        return self.field_answer(question, patents[0], found, note, citations, notes)

    def cover_answer(
        self, question: str, doc_id: str | None, doc: str | None, citations: list[Citation], notes: list[str]
    ) -> Answer | None:
        """A question about an opinion's cover (retrieval.caption_questions: its court, docket, date, judges,
        author, parties) or a Chinese judgment's head and signature (retrieval.zh_cover_questions: 法院, 案号,
        案由, 日期, 审判长, 当事人) answered from what the parser read there, in the judgment asked about,
        else the one the question names by its parties, else the one cited first."""
        zh = HAN.search(question) is not None
        if zh:  # the judgment's own title and instance, which a question may name it by
            _, title, meta = self.covers.heads().get(doc_id or doc or "", ("", "", {}))
            asked = zh_asked_part(question, title, meta.get("case_number") or "")
        else:
            asked = asked_part(question)
        if asked is None:
            return None
        target = doc_id or (None if zh else case_named(question, self.names.titles, loose=True)) or doc
        cover = self.covers.cover(target, "zh_judgment" if zh else "en_judgment") if target else None
        found = (answer_zh_cover if zh else answer_cover)(cover, *asked) if cover else None
        place = "judgment's head and signature" if zh else "opinion's cover"
        module = "zh_cover_questions" if zh else "caption_questions"
        note = f"read from the {place}: its {asked[0]} (retrieval/{module}.py)"
        return self.field_answer(question, target, found, note, citations, notes)

    def verdict_answer(
        self, question: str, doc_id: str | None, doc: str | None, citations: list[Citation], notes: list[str]
    ) -> Answer | None:
        """A question about what a Chinese criminal verdict imposed (retrieval.verdict_questions: charges,
        penalty, fine, probation, term) answered from the item of the defendant it names, in the judgment
        asked about (or named by its parties), else in the one cited first when it names one of its
        defendants."""
        part = verdict_part(question) if HAN.search(question) else None
        target = doc_id or doc
        blocks = self.covers.blocks(target, "zh_judgment", VERDICT_BLOCKS) if part and target else []
        found = answer_verdict(blocks, part, question, named_only=doc_id is None) if blocks else None
        if found is None:
            return None
        note = f"read from the verdict's item: its {part} (retrieval/verdict_questions.py)"
        return self.field_answer(question, target, found[0], note, citations, notes, answer_type=found[1])

    def field_answer(
        self,
        question: str,
        doc: str,
        found: CoverAnswer | None,
        note: str,
        citations: list[Citation],
        notes: list[str],
        answer_type: str = "field",
    ) -> Answer | None:
        """A value read from a document's head or verdict (`found`: its text and the block stating it),
        answered with the sentence of the block that holds `found.anchor` as evidence, else the block's first
        segment; None when nothing was found or no segment holds the block."""
        segs = [
            p.segment_id
            for p in (self.passages_of(doc) if found else [])
            if self.block_of[p.segment_id] == found.block_idx
        ]
        if not segs:
            return None
        notes.append(note)
        evidence = [self.evidence(segs[0], self.passage(segs[0]).text)]
        for seg in segs if found.anchor else []:
            text = self.passage(seg).text
            if (at := text.lower().find(found.anchor.lower())) >= 0:
                evidence = [self.evidence(seg, sentence_around(text, at, at + len(found.anchor)))]
                break
        return self.routed(question, (found.text, answer_type, None), evidence, None, citations, notes)

    def circumstance_answer(
        self, question: str, doc: str | None, citations: list[Citation], notes: list[str]
    ) -> Answer | None:
        """Whether a defendant had a sentencing circumstance, or which ones the court weighed
        (retrieval.circumstance_questions), answered from the criminal judgment asked about, else cited
        first."""
        part = asked_circumstance(question) if doc and HAN.search(question) else None
        judgment = self.zh_judgment(doc) if part else None
        found = circumstance_answer(question, part, judgment[0]) if judgment else None
        if found is None:
            return None
        note = f"read from the court's reasoning: {part} (retrieval/circumstance_questions.py)"
        if found.silent:
            note += "; the judgment states none for the defendant, so NO rests on its silence"
        return self.read_units(
            question, (found.answer, found.answer_type), found.units, note, citations, notes
        )

    def from_judgment(
        self,
        question: str,
        doc: str | None,
        asks: Callable[[str], object],
        read: Callable[[str, list[Passage]], JudgmentAnswer | None],
        note: str,
        citations: list[Citation],
        notes: list[str],
    ) -> Answer | None:
        """What `read` answers from the Chinese judgment asked about, else cited first (one passage per
        block), for a question `asks` says it reads: a defendant's custody (retrieval.custody_questions), the
        items of the judgment below a later instance disposed of (retrieval.appeal_items), the focus of
        dispute (retrieval.focus_questions), the appeal it allows (retrieval.appeal_questions), a published
        case's section (retrieval.digest_questions); `note` says where it was read."""
        asked = doc and HAN.search(question) and asks(question)
        judgment = self.zh_judgment(doc) if asked else None
        found = read(question, judgment[0]) if judgment else None
        if found is None:
            return None
        return self.read_units(
            question, (found.answer, found.answer_type), found.units, note, citations, notes
        )

    def outcome_answer(
        self, question: str, doc: str | None, citations: list[Citation], notes: list[str]
    ) -> Answer | None:
        """A question about what a Chinese court decided or the costs it ordered
        (retrieval.outcome_questions), answered from the ruling of the judgment asked about, else cited
        first: its own, or the one of an earlier instance that it reports."""
        part = outcome_part(question) if doc and HAN.search(question) else None
        judgment = self.zh_judgment(doc) if part else None
        found = outcome_answer(question, part, *judgment) if judgment else None
        if found is None:
            return None
        note = f"read from the ruling: its {part} (retrieval/outcome_questions.py)"
        return self.read_units(
            question, (found.answer, found.answer_type), found.units, note, citations, notes
        )

    def party_answer(
        self, question: str, doc_id: str | None, doc: str | None, citations: list[Citation], notes: list[str]
    ) -> Answer | None:
        """A question about what a party to a Chinese judgment asked for or argued
        (retrieval.party_questions), answered from that party's paragraph in the judgment asked about (or
        named by its parties), else in the one cited first when it names the party."""
        part = party_part(question) if doc and HAN.search(question) else None
        judgment = self.zh_judgment(doc) if part else None
        parties = self.names.parties.get(doc, [])
        found = party_answer(question, part, judgment[0], parties, doc_id is None) if judgment else None
        if found is None:
            return None
        note = f"read from the party's paragraph: its {part} (retrieval/party_questions.py)"
        return self.read_units(question, (found.answer, "sentence"), found.units, note, citations, notes)

    def statement_answer(
        self, question: str, doc: str | None, citations: list[Citation], notes: list[str]
    ) -> Answer | None:
        """An English question asking why an appeal was allowed or dismissed (retrieval.why_questions), its
        grounds (retrieval.grounds_questions) or what a judgment is about (retrieval.about_questions),
        answered from where the judgment asked about, else cited first, says so."""
        if not doc or HAN.search(question):
            return None
        if asks_why(question):
            found = reasons(self.passages_of(doc))
            answer, shown = (found[0][1] if found else ""), found[:3]
            note = "read from where the court concludes, before its disposition (retrieval/why_questions.py)"
        elif asks_grounds(question):
            found = grounds(self.passages_of(doc))
            answer, shown = " ".join(sentence for _, sentence in found), found
            note = (
                "read from where the judgment states its grounds of appeal (retrieval/grounds_questions.py)"
            )
        elif asks_about(question):
            found = subject(self.passages_of(doc))
            answer, shown = (found[0][1] if found else ""), found[:3]
            note = (
                "read from the judgment's opening, where it says what it is about"
                " (retrieval/about_questions.py)"
            )
        else:
            return None
        if not found:
            return None
        return self.read_units(question, (answer, "sentence"), shown, note, citations, notes)

    def from_english(
        self,
        question: str,
        doc: str | None,
        asks: Callable[[str], object],
        read: Callable[[str, list[Passage]], tuple[str, str, list[tuple[str, str]]] | None],
        note: str,
        citations: list[Citation],
        notes: list[str],
        *,
        whole_blocks: bool = False,
    ) -> Answer | None:
        """What `read` answers, as (answer, answer type, sentences), from the English document asked about,
        else cited first, for a question `asks` says it reads: what a defined term means
        (retrieval.definition_questions), a patent's claim tree (retrieval.claim_questions, its passages
        `whole_blocks`, one per block), separate opinions (retrieval.separate_opinions), whether a ground
        succeeded (retrieval.ground_outcomes), the standard of review (retrieval.review_questions); `note`
        says where it was read."""
        if not (doc and not HAN.search(question) and asks(question)):
            return None
        passages = self.passages_of(doc)
        if whole_blocks:
            passages = blockwise(passages, self.block_of.__getitem__)
        found = read(question, passages)
        if found is None:
            return None
        return self.read_units(question, found[:2], found[2], note, citations, notes)

    def ruling_answer(
        self, question: str, doc: str | None, citations: list[Citation], notes: list[str]
    ) -> Answer | None:
        """A question whether the court granted what was asked (retrieval.ruling_questions), answered from
        the ruling of the document asked about, else cited first."""
        found = ruling_answer(question, self.passages_of(doc)) if doc and asks_ruling(question) else None
        if found is None:
            return None
        note = f"read from the ruling's items: {found.answer} (retrieval/ruling_questions.py)"
        return self.read_units(
            question, (found.answer, found.answer_type), found.units, note, citations, notes
        )

    def zh_judgment(self, doc: str) -> tuple[list[Passage], str] | None:
        """(one passage per block, the case number) of `doc` when it is a Chinese judgment, else None."""
        head = self.covers.heads().get(doc)
        if head is None or head[0] != DocKind.ZH_JUDGMENT:
            return None
        return blockwise(self.passages_of(doc), self.block_of.__getitem__), head[2].get("case_number") or ""

    def read_units(
        self,
        question: str,
        answered: tuple[str, str],
        units: list[tuple[str, str]],
        note: str,
        citations: list[Citation],
        notes: list[str],
    ) -> Answer:
        """An answer (its text and type) read from `units` ((segment_id, text), each shown as evidence)."""
        notes.append(note)
        evidence = [self.evidence(segment_id, text) for segment_id, text in units]
        return self.routed(question, (*answered, None), evidence, None, citations, notes)

    def routed(
        self,
        question: str,
        answered: tuple[str, str, float | None],
        evidence: list[Evidence],
        score: float | None,
        citations: list[Citation],
        notes: list[str],
    ) -> Answer:
        """An answer read by a route of its own (a clause, a front-page field): `answered` is (answer,
        answer_type, confidence), `evidence` the sentences it rests on, best first, each cited (after the
        search's citations, with no fusion score)."""
        cited = {c.segment_id for c in citations}
        extra = dict.fromkeys(e.segment_id for e in evidence if e.segment_id not in cited)
        citations = [*citations, *(self.citation(s, 0.0) for s in extra)]
        return Answer(
            question,
            *answered,
            evidence[0],
            score,
            evidence[0].segment_id,
            citations,
            self.search_index.arms,
            getattr(self.reader, "checkpoint", None),
            notes,
            evidence[1:],
        )
