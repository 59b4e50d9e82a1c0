"""Typed English spans (retrieval/english_spans.py): what a question asks for, the phrases of that shape,
and the one nearest the question's words in the most relevant line. Texts written for these tests."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.answer import asks_several, fits_question
from retrieval.english_spans import candidates, span_kind, typed_span

HEADER = """Between:
MARLOWE FREIGHT LIMITED
Appellant
Ms Helen Artois KC (instructed by Fenwick Lane LLP) for the Appellant
Mr Daniel Ruiz (instructed by Coldharbour Partners) for the Respondent
Hearing date: 6 February 2024"""
CONTRACT = (
    "The initial term of this Agreement is five (5) years from December 19, 2019. HGF shall receive "
    "thirty percent (30%) of the net profit. Any arbitration shall be held in New York, New York (USA). "
    "In the event the damages sought are less than US$500,000, the dispute is decided by a single "
    "arbitrator. The Licensee may terminate this Agreement on ninety (90) days' written notice."
)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Who represented the appellant?", "person"),
        ("Which judge gave the leading judgment?", "person"),
        ("Which law firm acted for the insurer?", "organisation"),
        ("Who did Balmert work for before she stopped working?", "organisation"),  # an employer
        ("When was the opinion filed?", "date"),
        ("When does the Development Term end?", "date"),
        ("On what date was the agreement signed?", "date"),
        ("When may the licensee terminate the agreement?", "condition"),
        ("In what case is a dispute decided by a single arbitrator?", "condition"),
        ("How long is the initial term?", "duration"),
        ("How many days' notice must the licensee give?", "duration"),
        ("How much notice is needed to terminate the agreement?", "duration"),
        ("How much was the claimant awarded?", "amount"),
        ("According to the prison, how many officers does moving a prisoner require?", "amount"),
        ("To which publication did he leak the documents?", "organisation"),
        ("Whose remarks prompted the new claim?", "person"),
        ("What sentence did he receive for the conspiracy?", "penalty"),
        ("What share of the net profit goes to HGF?", "amount"),
        ("Where will any arbitration be held?", "place"),
        ("What prison term did he receive on the first count?", "duration"),
        ("Within what time must a claim be notified?", "duration"),
        ("What is the total annual fee for the services?", "amount"),
        ("What law governs the agreement?", "place"),
        ("Which federal court denied the petition?", "organisation"),
        ("Which prosecutor argued for the United States?", "person"),
        ("What is the patent number?", "number"),
        ("What is the application no.?", "number"),
        ("What wavelength does the diode emit?", "measure"),
        ("How thick is the coating?", "measure"),
        ("What fraction of the light reaches the cell?", "amount"),
        ("What was the initial consideration payable for the shares?", "amount"),
        ("How old was Brown when the murder was committed?", "age"),
        ("At what age did she leave school?", "age"),
        ("What is the appellant's date of birth?", "date"),
        ("At what figure were the costs summarily assessed?", "amount"),
        ("Where was the hearing held?", "place"),
        ("Where did the deputy judge go wrong?", None),  # a reason, not a place
        ("What is the maximum penalty for contempt of court?", "penalty"),
        ("When the Act was passed, what was the time limit for an abortion?", "duration"),  # after its clause
        ("What place, if any, does a best-interests assessment have?", None),  # a role, not a place
        ("What is the address of the house?", "address"),
        ("What was the property said to be worth at trial?", "amount"),
        ("What is worth noting about the judgment?", None),
        ("What did Judge Parfitt decide?", None),  # what a judge did, not which judge
        ("What is the melting point of tungsten?", None),
        ("Did the court allow the appeal?", None),
        ("被告人的辩护人是谁？", "office"),  # a Chinese question: retrieval/chinese_spans.py reads it
    ],
)
def test_the_question_names_the_type_of_its_answer(question, kind):
    assert span_kind(question) == kind


@pytest.mark.parametrize(
    ("question", "several"),
    [
        ("When the Act was passed, what was the time limit?", False),  # a leading clause asks nothing
        ("When did he leave and where did he go?", True),
        ("被告人犯什么罪，判处什么刑罚？", True),
        ("Who represented the appellant?", False),
    ],
)
def test_a_question_asking_two_things_at_once(question, several):
    assert asks_several(question) == several


@pytest.mark.parametrize(
    ("kind", "text", "want"),
    [
        ("person", HEADER, ["Ms Helen Artois KC", "Mr Daniel Ruiz"]),
        ("person", "Before: LORD JUSTICE FLOYD. Opinion by SILER, Circuit Judge.", ["LORD JUSTICE FLOYD"]),
        ("organisation", HEADER, ["Fenwick Lane LLP"]),
        ("date", HEADER + " Filed March 14, 2024; signed 1/2/2020.", ["6 February 2024", "March 14, 2024"]),
        ("duration", CONTRACT, ["five (5) years", "ninety (90) days"]),
        ("amount", CONTRACT, ["thirty percent (30%)", "less than US$500,000"]),
        ("place", CONTRACT, ["New York, New York (USA)"]),
        ("place", "resolved by arbitration in McLean, Virginia, under the rules", ["McLean, Virginia"]),
        ("condition", CONTRACT, ["In the event the damages sought are less than US$500,000"]),
        ("date", "ARGUED MARCH 31, 2009", ["MARCH 31, 2009"]),
        (
            "person",
            "Before FLAUM, MANION, and ROVNER, Circuit Judges.",
            ["FLAUM, MANION, and ROVNER, Circuit Judges"],
        ),
        ("organisation", "ON APPEAL FROM THE COUNTY COURT AT BRADFORD", ["COUNTY COURT AT BRADFORD"]),
        ("organisation", "hosted by T-Mobile Netherlands B.V. on its network", ["T-Mobile Netherlands B.V."]),
        (
            "measure",
            "a lamp at 450 nm, held between 20 °C and 30 °C for 3 s",
            ["450 nm", "between 20 °C and 30 °C"],
        ),
        ("measure", "a film about two millimetres thick", ["about two millimetres"]),
        ("number", "Patent No.: US 9,876,543 B1 Appl. No.: 16/123,456", ["US 9,876,543 B1", "16/123,456"]),
        (
            "number",
            "Neutral Citation Number: [2021] EWCA Crim 12 Case No: 202001234 B5",
            ["[2021] EWCA Crim 12"],
        ),
        ("place", "carried from Hamburg to Genoa in May 2019", ["Hamburg", "Genoa"]),
        ("date", "Order 9, issued on April 2, closed the schools.", ["April 2"]),  # its year left out
        ("organisation", "(74) Attorney, Agent, or Firm—Fish & Rowe L.L.P.", ["Fish & Rowe L.L.P."]),
        ("organisation", "BETWEEN ACME INC. AND BOLT TOOLS INC.", ["ACME INC.", "BOLT TOOLS INC."]),
        ("duration", "over a 10month period", ["10month"]),
        (
            "age",
            "when Brown was seventeen years old, aged 17 and a 17-year-old",
            ["seventeen years old", "aged 17"],
        ),
        ("age", "The children are aged 7, 3 and 1½. They were taken into care.", ["aged 7, 3 and 1½"]),
        (
            "duration",
            "ending two years after the Closing Date, or sixty (60) calendar\ndays prior to renewal",
            ["two years after the Closing Date", "sixty (60) calendar\ndays"],
        ),
    ],
)
def test_phrases_of_each_shape_are_found_whole(kind, text, want):
    found = [text[a:b] for a, b, _ in candidates(text, kind)]
    assert all(w in found for w in want), found


def test_role_words_and_sentence_openers_are_not_names():
    found = [(HEADER[a:b], shape) for a, b, shape in candidates(HEADER, "person")]
    assert [f for f, shape in found if shape == "person"] == ["Ms Helen Artois KC", "Mr Daniel Ruiz"]
    assert not any(f.split()[0] in ("Appellant", "Respondent", "Hearing") for f, _ in found), found
    assert candidates("James Perez, Assistant U.S. Attorney, argued.", "person") == [(0, 11, "name")]
    assert candidates("on the Effective Date and to an Affiliated Company", "person") == []  # defined terms
    text = "The Court held that the United States Secretary had appealed."
    assert all(shape == "organisation" for _, _, shape in candidates(text, "person"))


def test_the_phrase_nearest_the_question_in_the_most_relevant_line_answers():
    passages = [("d:0", HEADER), ("d:1", CONTRACT)]
    got = typed_span("Who was counsel for the respondent?", passages)
    assert got is not None and got.text == "Mr Daniel Ruiz" and got.segment_id == "d:0"
    assert got.unit == "Mr Daniel Ruiz (instructed by Coldharbour Partners) for the Respondent"
    assert HEADER[got.start : got.end] == got.text
    where = typed_span("Where is an arbitration held?", passages)
    assert where is not None and where.text == "New York, New York (USA)" and where.segment_id == "d:1"
    cond = typed_span("In what case is a dispute decided by a single arbitrator?", passages)
    assert cond is not None and cond.text.startswith("In the event the damages sought")


def test_no_typed_answer_without_a_relevant_line_or_a_type():
    passages = [("d:1", CONTRACT)]
    assert typed_span("Who is the chief executive of the auditor?", passages) is None  # no relevant line
    assert typed_span("What is the melting point of tungsten?", passages) is None  # no type asked for
    # the question's own name is never its answer
    assert typed_span("Who represented Mr Daniel Ruiz?", [("d:0", "Mr Daniel Ruiz appeared.")]) is None


def test_a_how_many_question_counts_the_things_it_names_never_a_sum():
    line = (
        "The Initial Fee for the second restaurant is $30,000, and Developer shall pay 5% of sales under "
        "Section 2.20 hereof. Developer shall purchase 1,000,000 shares and open 4 restaurants."
    )
    assert typed_span("How many restaurants shall Developer open?", [("d:0", line)]).text == "4 restaurants"
    assert typed_span("How many shares shall Developer purchase?", [("d:0", line)]).text == "1,000,000 shares"
    fees = "The Initial Fee for each restaurant developed is $30,000."
    assert typed_span("How many restaurants must be developed?", [("d:0", fees)]) is None
    assert typed_span("How much is the fee for each restaurant?", [("d:0", fees)]).text == "$30,000"
    assert not fits_question("How many restaurants must be developed?", "$30,000", "OPINION")
    # the count goes on through the words the question counts; a hyphenated word is one of them
    escort = [("d:2", "In addition, three escorting officers are required.")]
    assert typed_span("How many escorting officers does it take?", escort).text == "three escorting officers"
    adopted = [("d:3", "The number is now much smaller: 3,570 children looked after were adopted in 2019.")]
    assert (
        typed_span("How many looked-after children were adopted in 2019?", adopted).text == "3,570 children"
    )
    centres = [("d:5", "PKU is treated in 10 specialist metabolic services centres in England.")]
    assert typed_span("In how many centres is PKU treated?", centres).text == (
        "10 specialist metabolic services centres"
    )
    # a paragraph's number before a pronoun counts nothing
    said = [("d:1", "At paragraph 71 he said that the fish were of no value.")]
    assert typed_span("How much does BDS say the fish are worth?", said) is None


@pytest.mark.parametrize(
    ("question", "line", "want"),
    [
        (
            "What sentence did he receive in 2015?",
            "He had lived here for 21 years. In 2015 he was sentenced to 3 years’ imprisonment.",
            "3 years’ imprisonment",
        ),
        (
            "For how long did the protestors remain?",
            "The protestors remained in place for some six and a half hours until around 1.30pm.",
            "some six and a half hours",
        ),
        (
            "What is the address of the house?",
            "The appeal concerns a house at 47, Moresby Road, London E5 9LE (“the property”).",
            "47, Moresby Road, London E5 9LE",
        ),
        (
            "What is the address of the Service Center?",
            "Our Service Center address is 4321 North Ballard Road, Appleton, WI 54919-0001.",
            "4321 North Ballard Road, Appleton, WI 54919-0001",
        ),
        (
            "Where is the land?",
            "The land is at Cemetery Road, Birkby, Huddersfield and is owned by the council.",
            "Cemetery Road, Birkby, Huddersfield",
        ),
        (
            "What was the property worth?",
            "The evidence was that the property was now worth in the region of £1 million.",
            "in the region of £1 million",
        ),
        ("How much did Rank claim?", "Rank brought a claim for £67.05m on that basis.", "£67.05m"),
    ],
)
def test_a_phrase_of_the_kind_asked_is_whole(question, line, want):
    assert typed_span(question, [("d:0", line)]).text == want


def test_which_judge_is_answered_by_a_judge_not_a_party_beside_one():
    line = "An appeal by the Second Defendant (Mr Bell) against an order of Teare J giving Ivy permission."
    assert typed_span("Which judge gave Ivy permission?", [("d:0", line)]).text == "Teare J"
    cited = [("d:1", "At [53] the judge contrasted Isle of Anglesey County Council v Welsh Ministers.")]
    assert typed_span("Which judge dismissed the claim?", cited) is None  # a council is no judge
    judges = "before Elisabeth Laing J and HHJ Hodge QC"
    assert [judges[a:b] for a, b, _ in candidates(judges, "person")] == ["Elisabeth Laing J", "HHJ Hodge QC"]
    assert [s for _, _, s in candidates("signed by John J. Smith", "person")] == ["name"]  # an initial


def test_tribunal_judges_and_roles_other_than_a_judge():
    line = "The hearing was before EJ Kolanko, who refused the adjournment that DDJ Ackland had allowed."
    assert [s for _, _, s in candidates(line, "person")] == ["person", "person"]
    assert typed_span("Which employment judge refused the adjournment?", [("d:0", line)]).text == "EJ Kolanko"
    award = [("d:0", "Mostyn J set aside the award of the arbitrator, Mr Howard Shaw QC, in the dispute.")]
    assert typed_span("Who was the arbitrator in the dispute?", award).text == "Mr Howard Shaw QC"
    # the owner in "Ms Stanley's solicitors" is not who acted
    review = [
        ("d:0", "Ms Stanley’s solicitors asked for a review, and Mr David Trewick carried out the review.")
    ]
    assert typed_span("Who was the officer carrying out the review?", review).text == "Mr David Trewick"


def test_a_date_of_birth_is_the_date_one_was_born_on():
    lines = [("d:0", "Date: 8 April 2020"), ("d:1", "The appellant was born on 11 April 1992 in Sylhet.")]
    assert typed_span("What is the appellant's date of birth?", lines).text == "11 April 1992"


def test_a_court_answers_who_decided_not_who_was_harmed():
    line = [("d:0", "Brown was convicted in the Superior Court of murder for the killing of Tyriffe Lewis.")]
    assert typed_span("Who was Brown convicted of killing?", line).text == "Tyriffe Lewis"
    assert typed_span("Which court convicted Brown?", line).text == "the Superior Court"


def test_the_sentence_model_can_make_a_line_relevant():
    line = "Ms Helen Artois KC (instructed by Fenwick Lane LLP) for the Appellant"
    question = "Who is the person in this case?"
    assert typed_span(question, [("d:0", line)]) is None  # no term of the question in the line
    close = typed_span(question, [("d:0", line)], lambda texts: np.full(len(texts), 0.9))
    assert close is not None and close.text == "Ms Helen Artois KC"


def test_a_line_of_the_role_asked_about_answers_however_the_question_is_worded():
    counsel = "Andrew Waugh QC (instructed by Gowling WLG) for the First Appellant"
    wordy = "Dr Jane Britton gave evidence for Neurim and Flynn about the market for melatonin products."
    got = typed_span("Which barrister acted for Neurim and Flynn?", [("d:0", wordy), ("d:1", counsel)])
    assert got is not None and got.text == "Andrew Waugh QC"
    signed = "IN WITNESS WHEREOF the parties have signed this Agreement.\nBy: /s/ Bruce D. Wardinski"
    got = typed_span("Who signed the agreement for Playa?", [("d:2", signed)])
    assert got is not None and got.text == "Bruce D. Wardinski"


def test_where_a_phrase_stands_says_which_question_it_answers():
    head = "IN THE COURT OF APPEAL (CRIMINAL DIVISION) ON APPEAL FROM THE CROWN COURT AT LEEDS"
    heard = typed_span("Which court heard the appeal?", [("d:0", head)])
    assert heard is not None and heard.text == "COURT OF APPEAL"  # its type named, not its own words
    below = typed_span("Which court was the appeal from?", [("d:0", head)])
    assert below is not None and below.text == "CROWN COURT AT LEEDS"
    voyage = [("d:1", "The goods were carried from Hamburg to Genoa in May 2019.")]
    assert typed_span("Where were the goods carried from?", voyage).text == "Hamburg"
    assert typed_span("Where were the goods carried to?", voyage).text == "Genoa"
    numbers = [("d:2", "Case No: 202001234 B5"), ("d:3", "Patent No.: US 9,876,543 B1")]
    assert typed_span("What is the patent number?", numbers).text == "US 9,876,543 B1"


def test_counsel_who_argued_comes_before_those_with_whom_others_were_on_brief():
    line = (
        "Ruth B. Okafor, Assistant Attorney General, with whom Paul Quint, Attorney General, was on brief, "
        "for appellee."
    )
    assert typed_span("Who argued for the appellee?", [("c:0", line)]).text == "Ruth B. Okafor"


def test_the_value_of_a_label_naming_the_question_answers_it():
    line = [("p:0", "Inventor: Mara Quist, Ghent (BE) (73) Assignee: Velotec Corporation, Ghent")]
    assert typed_span("Who is the assignee?", line).text == "Velotec Corporation"
    assert typed_span("Who is the inventor?", line).text == "Mara Quist"


def test_a_label_naming_the_question_makes_its_line_relevant():
    head = [
        ("p:0", "United States Patent"),
        ("p:1", "Date of Patent: Jan. 5, 2021"),
        ("p:2", "Filed: Mar. 2, 2018"),
    ]
    assert typed_span("When was the patent filed?", head).text == "Mar. 2, 2018"
    # a PDF head's field with its label alone on the line before its value
    apart = [("q:0", "(45) Date of Patent: Jan. 5, 2021"), ("q:1", "(22) Filed:"), ("q:2", "Mar. 2, 2018")]
    found = typed_span("When was the application filed?", apart)
    assert found.text == "Mar. 2, 2018" and found.segment_id == "q:2"


def test_a_question_asking_for_several_names_gets_every_name_of_its_lines():
    head = [
        ("j:0", "Before:"),
        ("j:1", "LORD JUSTICE UNDERHILL"),
        ("j:2", "LADY JUSTICE SIMLER and"),
        ("j:3", "LORD JUSTICE BAKER"),
        ("j:4", "Between:"),
        ("j:5", "HOLLIS ROPE LIMITED Claimant"),
        ("j:6", "- and -"),
        ("j:7", "QUAYSIDE CRANES LTD Defendant"),
        ("j:8", "Mr Ian Dodd (instructed by Penn & Co) for the Claimant"),
    ]
    judges = typed_span("Which judges heard the appeal?", head)
    assert judges.text == "LORD JUSTICE UNDERHILL, LADY JUSTICE SIMLER and LORD JUSTICE BAKER"
    assert typed_span("Who are the parties?", head).text == "HOLLIS ROPE LIMITED and QUAYSIDE CRANES LTD"
    assert typed_span("Who was the defendant?", head).text == "QUAYSIDE CRANES LTD"
    # a sentence that ends with a party named by its role is no line of the parties
    body = [("j:9", "The notice was served on Quayside Cranes Ltd by the defendant.")]
    assert (
        typed_span("Who are the parties?", head + body).text == "HOLLIS ROPE LIMITED and QUAYSIDE CRANES LTD"
    )
    inventors = [("p:0", "Inventors: Ada Quill, Leeds (GB); Piet Vonk, Delft (NL)")]
    assert typed_span("Who are the inventors?", inventors).text == "Ada Quill and Piet Vonk"


def test_a_sentence_borrows_relevance_from_the_one_before_it():
    text = (
        "This judgment was handed down remotely by circulation to the parties. "
        "The date and time for hand-down is deemed to be 10:30am on Tuesday 30 June 2020."
    )
    got = typed_span("When was the judgment handed down?", [("d:0", text)])
    assert got is not None and got.text == "30 June 2020" and got.unit.startswith("The date and time")


@given(
    st.text(alphabet="Ab .,()$%159\n-Mr", max_size=80),
    st.sampled_from(
        ["person", "date", "amount", "duration", "place", "condition", "organisation", "measure", "number"]
    ),
)
def test_candidates_lie_in_the_text_in_order_without_overlap(text, kind):
    found = candidates(text, kind)
    assert all(0 <= a < b <= len(text) for a, b, _ in found)
    assert all(b1 <= a2 for (_, b1, _), (a2, _, _) in zip(found, found[1:], strict=False))
