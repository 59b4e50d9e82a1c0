"""Questions about a contract's clauses, answered by the clause head (retrieval/predict/clauses.py).

    clause_category(question) -> "Governing Law" | ... | None
    ClauseReader(head).answers(category, doc_id, passages, n) -> [ClauseAnswer, ...], likeliest first

`clause_category` names the CUAD clause category an English question asks about ("Which state's law
governs this agreement?" → Governing Law), or None. Each category has a pattern of the words a question
about it uses; the patterns are tried in the order of `CUES`, which puts a narrow category before the
broad one whose words it shares (Uncapped Liability before Cap On Liability, Non-Transferable License
before Anti-Assignment, Notice Period To Terminate Renewal before Renewal Term). Their precision and
recall are measured on questions written apart from them (benchmarks/clause_questions.py).

`ClauseReader` ranks the sentences of one document's passages for a category, as `ldx run`'s clause rows
do: every sentence is scored for every category once per document and kept for the session. `ldx ask`
answers with the likeliest when the head gives it at least `min_probability` (by default the clause rows'
bar, `predict.clause_min_probability`).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from retrieval.english_spans import span_kind, typed_span
from retrieval.hybrid import Passage
from retrieval.named_documents import without_names
from retrieval.predict.clause_spans import every_party
from retrieval.predict.clauses import ClauseHead, contract_sentences
from retrieval.predict.config import PredictConfig
from retrieval.text import joined

CACHED_DOCS = 32  # documents whose sentence scores a session keeps
MIN_PROBABILITY = PredictConfig().clause_min_probability

_LICENSE = r"licen[cs]\w*"
_IP = r"(\bip\b|intellectual property|inventions?|work product|deliverables|developments|improvements|patents?|results)"
_END = r"(terminat\w*|expir\w*|ends?|ended|expiry)"
_ROLE = (
    r"(licen[cs]or|licen[cs]ee|buyer|seller|vendor|supplier|customer|distributor|reseller|franchis(or|ee)|"
    r"consultant|contractor|company|lessor|lessee|sponsor|agent)"
)
# "the agreement", "the software license agreement" (but "the Development Term" is a term the contract
# defines, not its own)
_THE = r"(the|this)( [\w-]+){0,3}"
_ITS_TERM = rf"({_THE} (agreement|contract)|(the|this) term)"
_GROUP = r"(affiliates?|subsidiar\w*|parent|sister|group compan\w*|related (companies|entities)|controlled)"
CUES: dict[str, str] = {
    "Notice Period To Terminate Renewal": r"\b(notice|notify|advance)\b.*\brenew|\brenew\w*\b.*\b(notice|by when)\b|"
    r"\b(stop|prevent|avoid|block|opt out|cancel)\w*\b.*\brenew",
    "Renewal Term": r"\brenew\w*|\bextend\w*\b.*\b(term|after|beyond)\b|\badditional (years?|terms?|periods?)\b|"
    r"\bcontinue\b.*\bif (no one|nobody|neither)",
    "Uncapped Liability": r"\buncapped\b|\bunlimited liabilit|\bliab\w*\b.*\b(without (any )?(limit|cap)|unlimited|"
    r"uncapped|not (subject to|covered by)|excluded|exclusions?|carve[sd]?[- ]outs?)\b|\b(excluded|exclusions?|"
    r"carve[sd]?[- ]outs?)\b.*\b(limitation|cap)\b|\bnot subject to the (cap|limit)|\bfully liable\b",
    "Cap On Liability": r"\b(cap|limit|limitation|maximum|ceiling)\w*\b.*\bliab|\bliab\w*\b.*\b(cap|capped|limit\w*|"
    r"exceed)\b|(how much|most) .*\bliable\b|\bdamages\b.*\b(limited|capped)\b|\b(limit|cap)\w*\b.*\bdamages\b",
    "Affiliate License-Licensor": rf"\blicen[cs]or'?s?\b.*\b{_GROUP}|{_GROUP}\b.*\blicen[cs]or\b",
    "Affiliate License-Licensee": rf"\blicen[cs]ee'?s?\b.*\b{_GROUP}|{_GROUP}\b.*\b{_LICENSE}|\b{_LICENSE}\b.*"
    r"\b(extend|cover|appl(y|ies))\w*\b.*\b(companies|entities)\b|\b(entities|companies) related to\b",
    "Unlimited/All-You-Can-Eat-License": r"\bunlimited\b|all[- ]you[- ]can[- ]eat|enterprise[- ]wide|\b(any number|"
    r"as many) (of )?(users|copies|devices|seats|installations)|\bno (limit|cap) on (the number of )?(users|copies|"
    r"devices|seats|installations)",
    "Volume Restriction": r"\b(limit|cap|capped|maximum|restrict\w*)\b.*\b(number of (users|units|copies|devices|"
    r"seats)|volume|usage)\b|\b(volume|usage)\b.*\b(limit\w*|cap|capped|restrict\w*)\b|\bexceed\w*\b.*\b(usage|"
    r"volume|users|limit)",
    "Irrevocable Or Perpetual License": rf"\birrevocabl\w*|\bperpetu\w*|\bforever\b|\bindefinitely\b|\brevok\w*\b.*"
    rf"\b{_LICENSE}|\b{_LICENSE}\b.*\brevo(ke|cable|ked)\b",
    "Non-Transferable License": rf"\b{_LICENSE}\b.*\b(transfer\w*|non-?transferable|non-?assignable|pass on)|"
    rf"\btransfer\w*\b.*\b{_LICENSE}|\bsub-?licen[cs]\w*",
    "Source Code Escrow": r"\bsource code\b|\bescrow\w*\b.*\b(code|software|materials|release|deposit\w*)|"
    r"\b(code|software|deposit\w*)\b.*\bescrow",
    "Joint Ip Ownership": rf"\bjoint\w*\b.*\b(own\w*|{_IP})|\b(own\w*|{_IP})\b.*\bjoint\w*|\bco-?own\w*|"
    r"\bshare\w*\b.*\bownership|\bownership\b.*\bshared",
    "Ip Ownership Assignment": rf"\b(own|owns|owned|owner|ownership)\b.*\b{_IP}|\b{_IP}\b.*\b(own|owns|owned|"
    rf"belong\w*|assigned|vest\w*)\b",
    "License Grant": rf"\b{_LICENSE}\b.*\b(grant\w*|right to use)|\bgrant\w*\b.*\b({_LICENSE}|right to use)|"
    r"\bright to use\b.*\b(trademarks?|software|technology|marks)|\blicen[cs]ed to (use|make|sell|distribute|"
    rf"copy)|\bwhat rights does the {_ROLE}\b",
    "Competitive Restriction Exception": r"\b(exceptions?|except|despite|notwithstanding|carve[sd]?[- ]outs?)\b.*"
    r"\b(non-?compet\w*|exclusiv\w*|restrict\w*|covenants?)|\b(non-?compet\w*|exclusiv\w*|restrict\w*)\b.*"
    r"\b(exceptions?|despite|notwithstanding|carve[sd]?[- ]outs?)\b",
    "Non-Compete": r"\bnon-?compet\w*|\bcompet(e|es|ing|itive (business|products?))\b|\bprohibited from engaging\b",
    "Exclusivity": r"\bexclusiv\w*|\ball of (its|their) requirements\b|\bappoint\w*\b.*\bother (resellers|"
    r"distributors|agents|suppliers|vendors)\b|\bsole (supplier|distributor|reseller|provider|source)\b",
    "No-Solicit Of Customers": r"\b(solicit\w*|poach\w*|approach\w*|divert\w*|entic\w*|lur\w*|do business with)\b.*"
    r"\b(customers?|clients?)\b|\b(customers?|clients?)\b.*\b(solicit\w*|poach\w*)",
    "No-Solicit Of Employees": r"(\bsolicit\w*|\bhire|\bhiring|\bpoach\w*|\brecruit\w*)\b.*\b(employees?|staff|"
    r"personnel)\b|\b(employees?|staff|personnel)\b.*\b(solicit\w*|hire|hired|poach\w*|recruit\w*)",
    "Non-Disparagement": r"\bdisparag\w*|\bnegative (statements?|comments?|remarks?)|\bdefam\w*|\bcritici[sz]\w*|"
    r"\bbad[- ]?mouth\w*",
    "Termination For Convenience": r"\b(terminat\w*|end|cancel\w*)\b.*\b(convenience|without cause|for any reason|"
    r"at any time|at will|for no reason)|\bconvenience\b.*\bterminat",
    "Rofr/Rofo/Rofn": r"\bfirst (refusal|offer|negotiation)|\brof[rno]\b|\bfirst (chance|option|opportunity) to|"
    r"\bbefore offering (it )?to (others|anyone|third)",
    "Post-Termination Services": rf"\b(continue|survive|keep|still|sell[- ]?off|support\w*)\w*\b.*\b(after|following|"
    rf"upon)\b.*\b{_END}|\b(after|following|upon|post)[- ](the )?(contract |agreement )?{_END}\b.*\b(continue|"
    r"services?|support|assist\w*|obligations?|transition|sell|inventory)|\btransition (services|assistance|"
    r"period)|\bwind[- ]down|\bsell[- ]off\b",
    "Change Of Control": r"\bchange (of|in) control|\bmerg(er|es|ed)\b|\bacquir\w*|\bacquisition\b|\btakeover\b|"
    r"\bif\b.*\b(is|are|gets|get) (bought|purchased|sold|taken over)\b",
    "Liquidated Damages": r"\bliquidated\b|\b(termination|break|cancellation|exit) fees?\b|\bpenalt(y|ies)\b|"
    r"\bfixed (sum|amount)\b.*\bdamages\b|\bdamages\b.*\b(fixed|pre-?agreed|set) (sum|amount)",
    "Third Party Beneficiary": r"\bbeneficiar\w*|\bnot a party\b.*\benforce|\benforce\w*\b.*\bthird[- ]part|"
    r"\b(persons?|anyone|someone|people|entities) other than the parties|\bnon-?parties\b",
    "Covenant Not To Sue": r"\bcovenant not to sue\b|\bnot (to )?(sue|challenge|contest)\b|\b(suing|sue)\b|"
    r"\b(challenge|contest|dispute)\w*\b.*\b(validity|ownership)\b",
    "Anti-Assignment": r"\bassign(s|ed|ing|ment|able)?\b|\btransfer\w*\b.*\b(rights|agreement|contract)\b|"
    r"\bdelegat\w*",
    "Most Favored Nation": r"\bmost[- ]favou?red\b|\bmfn\b|\b(better|best|lower|more favou?rable) (prices?|"
    r"pricing|terms)\b.*\b(other|any|someone|anyone|third)|\bas favou?rable as\b",
    "Price Restrictions": r"\b(raise|increase|change|adjust|set)\w*\b.*\b(prices?|fees?|rates?)\b|\b(prices?|fees?)\b"
    r".*\b(increase|cap|limit|fixed|adjust|raise)\w*",
    "Minimum Commitment": r"\bminimum\b.*\b(purchase|order|quantit\w*|volume|commitment|amount|sales|spend|payment|"
    r"fee|units|number)|\b(purchase|order|quantit\w*|spend|buy)\w*\b.*\bminimum\b|\b(must|required to) (buy|"
    r"purchase|order)\b",
    "Audit Rights": r"\baudit\w*|\b(inspect|examin|review|check)\w*\b.*\b(books|records|accounts)\b|\b(books|records)"
    r"\b.*\b(inspect\w*|examin\w*)",
    "Revenue/Profit Sharing": r"\b(share|shares|sharing|split)\b.*\b(revenues?|profits?|income|proceeds)\b|"
    r"\b(revenues?|profits?|income|proceeds)\b.*\b(share|shared|sharing|split|receive)\b|\broyalt(y|ies)\b",
    "Insurance": r"\binsur\w*",
    "Warranty Duration": r"\bwarrant\w*\b.*\b(period|duration|last|long|months?|years?|expir\w*|end)\b|"
    r"\b(how long|duration|period|months?|years?)\b.*\bwarrant\w*",
    "Governing Law": r"\blaws?\b.*\b(govern\w*|interpret\w*|constru\w*)|\b(govern\w*|interpret\w*|constru\w*)\b.*"
    r"\blaws?\b|\bchoice[- ]of[- ]law\b|\bapplicable law\b",
    "Document Name": r"\b(title|name) of (the|this) (agreement|contract|document)\b|\bwhat (kind|type|sort) of "
    r"(agreement|contract|document)\b|\b(agreement|contract|document) (called|titled|named)\b|\bis this an? "
    r"\w+ (agreement|contract)\b",
    "Effective Date": r"\beffective date\b|\b(take|takes|come|comes|become|becomes|go|goes) (into )?effect\b|"
    r"\b(agreement|contract|term|obligations?)\b.*\b(start|begin|commence)\w*|\b(start|begin|commence)\w*\b.*"
    r"\b(agreement|contract|term|obligations?)\b|\bcommencement\b",
    "Expiration Date": rf"\bexpir\w*|\bwhen (does|will) {_ITS_TERM} {_END}\b|"
    rf"\bhow long (is|does|will) {_ITS_TERM}\b|\b(initial )?term of {_THE} (agreement|contract)\b|"
    rf"\bduration of {_THE} (agreement|contract)\b",
    "Agreement Date": r"\b(what|which) (date|day)\b.*\b(signed|executed|dated|made)\b|"
    r"\bwhen (is|was|were|did)\b.*\b(sign|signed|execute|executed|entered into|enter into|made|dated)\b|"
    r"\bdate of (the|this) (agreement|contract)\b|\bagreement date\b",
    "Parties": r"\bwho are the parties\b|\bparties to (the|this) (agreement|contract)\b|\bwhich (companies|"
    r"entities|parties)\b.*\b(signed|entered|parties|party)\b|\bbetween whom\b|"
    rf"^\s*who (is|are) the {_ROLE}s?\s*(\?|$|and who)",
}
_PATTERNS = {category: re.compile(cue, re.IGNORECASE) for category, cue in CUES.items()}


def clause_category(question: str) -> str | None:
    """The clause category the question asks about: the first in CUES whose cue it holds, read first without
    the names it gives documents (the governing law of "the non-competition agreement" is no Non-Compete
    question)."""
    for text in (without_names(question), question):
        found = next((c for c, p in _PATTERNS.items() if p.search(text)), None)
        if found is not None:
            return found
    return None


def clause_phrase(question: str, found: ClauseAnswer, typed: bool) -> str | None:
    """What of the head's sentence answers the question: every party for a Parties question (None when it
    names fewer than two), the name or date of the category's answer kind, the phrase of the type a typed
    question asks for (`typed`: retrieval.english_spans; None when the sentence holds none), else the
    sentence."""
    if found.category == "Parties":
        return found.answer if found.parties > 1 else None
    if found.answer != found.sentence or not typed or span_kind(question) is None:
        return found.answer
    phrase = typed_span(question, [(found.segment_id, found.sentence)], min_relevance=0.0)
    return phrase.text if phrase is not None else None


def answering_first(
    found: list[ClauseAnswer], bar: float, phrase: Callable[[ClauseAnswer], str | None]
) -> list[ClauseAnswer]:
    """The head's sentences with the likeliest one at or above `bar` whose `phrase` answers the question
    first, that phrase its answer (the preamble naming both parties before a likelier line naming one, the
    clause holding the period asked for before a likelier one without it); as found when none does."""
    for i, f in enumerate(found):
        if f.probability < bar:
            break
        answer = phrase(f)
        if answer is not None:
            return [replace(f, answer=answer), *found[:i], *found[i + 1 :]]
    return found


@dataclass
class ClauseAnswer:
    category: str
    segment_id: str
    sentence: str  # the likeliest sentence, as cut from its segment's text
    answer: str  # the sentence, or the title, party or date in it (the category's answer kind)
    probability: float  # the head's probability that the sentence is (part of) such a clause
    parties: int = 0  # the parties the sentence names, for a Parties question


class ClauseReader:
    """The clause head over a session's documents: each document's sentences, cut within its passages
    (`contract_sentences`), scored for every category on first use and cached."""

    def __init__(self, head: ClauseHead, min_probability: float = MIN_PROBABILITY):
        self.head = head
        self.min_probability = min_probability  # below it `ldx ask` answers "none"
        self._docs: OrderedDict[str, tuple[list[tuple[Passage, int, int]], np.ndarray]] = OrderedDict()

    def answers(self, category: str, doc_id: str, passages: list[Passage], n: int = 3) -> list[ClauseAnswer]:
        """The `n` likeliest sentences of `category` among the document's `passages`, likeliest first; []
        when the head does not know the category or the passages hold no sentence."""
        if category not in self.head.categories:
            return []
        spans, scores = self._scored(doc_id, passages)
        j = self.head.categories.index(category)
        out = []
        for i in np.argsort(-scores[:, j], kind="stable")[:n]:
            p, start, end = spans[i]
            hit = self.head.hit(p.text, (start, end), j, float(scores[i, j]))
            answer = p.text[hit.answer[0] : hit.answer[1]].strip()
            names = every_party(p.text[start:end]) if category == "Parties" else []
            if len(names) > 1:  # who the parties are: all of them, as the sentence names them
                answer = joined([p.text[start + a : start + b].strip() for a, b in names])
            sentence = p.text[start:end].strip()
            out.append(ClauseAnswer(category, p.segment_id, sentence, answer, hit.probability, len(names)))
        return out

    def _scored(self, doc_id: str, passages: list[Passage]):
        if doc_id in self._docs:
            self._docs.move_to_end(doc_id)
            return self._docs[doc_id]
        spans = [(p, a, b) for p in passages for a, b in contract_sentences(p.text)]
        scored = spans, self.head.scores([p.text[a:b] for p, a, b in spans])
        self._docs[doc_id] = scored
        if len(self._docs) > CACHED_DOCS:
            self._docs.popitem(last=False)
        return scored
