"""Which sentence answers a sentence question (retrieval/sentence_rank.py) and what a question's wording says
it asks (retrieval/answer.py). Texts written for these tests."""

from __future__ import annotations

import pytest

from retrieval.answer import complete_span, evidence_kind, question_kind
from retrieval.sentence_rank import fits_kind, rank_sentences, voiced
from retrieval.sides import asks_argument
from retrieval.zh_cover_questions import zh_asked_part

REASONS = (
    "2. The narrow point of principle on appeal is whether the Signed For service is first class post.\n"
    "41. The service is sold as first class post with a signature on delivery.\n"
    "42. For all those reasons, I conclude that the Signed For service is first class post under the rule."
)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Where did the deputy judge go wrong in finding a concluded compromise?", "reason"),
        ("How did the judge err in applying section 117B(6)?", "reason"),
        ("What happened to Ms Runa's appeal in the Court of Appeal?", "decision"),
        ("What happened on 5 May 2019?", "span"),
        ("What happened to the care orders and the parents' appeals in the end?", "decision"),
        ("Did the Court of Appeal give Z permission to appeal, and why?", "reason"),
        ("What does an appellant need to show for the court to interfere with a costs order?", "statement"),
        ("What approach should a court take to extending time for service?", "statement"),
        ("What did Judge Parfitt decide in his judgment of 15 April 2020?", "decision"),
        ("How did the couple come to use arbitration instead of a trial?", "statement"),
        ("What is Mr Cowley actually suing for?", "statement"),
        ("On what basis was the refusal to produce him at court quashed?", "reason"),
        ("法院凭什么认定公安分局构成行政不作为？", "reason"),
        # the judgment appealed is named, the appeal's grounds are asked
        ("青云公司不服一审判决，上诉都说了些什么理由？", "argument"),
        ("广州二建上诉主要讲了哪些理由？", "argument"),
        ("王杰文上诉是怎么说的？", "argument"),
        ("二审法院驳回上诉的理由是什么？", "reason"),  # the court's reasons for rejecting the appeal
        (
            "公诉机关凭什么认为李某构成过失致人死亡罪？",
            "argument",
        ),  # the prosecutor's reasons, not the court's
        ("检察院为什么要求对他这次的事实再作判决？", "argument"),
        ("被告为什么要承担赔偿责任？", "reason"),  # why the court held the defendant liable
        ("法医鉴定林某的死亡原因是什么？", "span"),  # a cause of death is a fact found
        ("法院为啥没采纳这个意见？", "reason"),
        ("法院对这些证据是什么态度？", "reason"),
        ("二审出庭检察员对原判是什么态度？", "argument"),  # a party's view, not the court's
        ("文远明对起诉书是怎么辩解的？", "argument"),
    ],
)
def test_what_a_question_asks_for(question, kind):
    assert question_kind(question) == kind


def test_a_yes_no_question_in_english_is_shown_the_courts_reasoning():
    assert evidence_kind("Was the claim against the solicitors statute-barred?", "span") == "reason"
    assert evidence_kind("被告人是否构成自首？", "span") == "span"  # a CJRC-style question: the reader's
    assert evidence_kind("Who appealed?", "span") == "span"
    assert asks_argument("青云公司不服一审判决，上诉都说了些什么理由？")


def test_the_court_speaking_for_itself_is_its_reasoning_not_the_question_or_a_quotation():
    assert voiced("42. For all those reasons, I conclude that the service is first class post.")
    assert voiced("The judge was therefore right in my view to conclude that the claim was in time.")
    assert not voiced("“Accordingly, in my judgment, the judge fell into error,” said Lord Neuberger.")
    assert not voiced("The service is sold as first class post.")
    assert not voiced('We find that it would therefore apply to a fixed-term contract."')  # a quotation's end
    assert voiced("For those reasons, I conclude that it falls within the rubric “First class service”.")
    issue = "The narrow point of principle on appeal is whether the service is first class post."
    assert fits_kind("reason", "OPINION", "The service is sold as first class post.") == 1
    assert fits_kind("reason", "OPINION", issue) == 0  # the question a reason answers is no reason
    assert fits_kind("reason", "OPINION", "(c) Is the stay inconsistent with article 6?") == 0
    # a paragraph the parser typed as facts, in which the judge gives his view
    view = "20. I do not think it is correct to construe declarations as if they were patent claims."
    assert fits_kind("reason", "FACTS", view) == 1
    assert fits_kind("reason", "FACTS", "Accordingly, the claimant issued proceedings in 2019.") == 0
    question = "Does the deemed service rule cover the Signed For service?"
    ranked = rank_sentences(question, [("d:0", "OPINION", REASONS)], evidence_kind(question, "span"))
    assert ranked[0].text.startswith("42. For all those reasons")


def test_a_chinese_court_answering_a_point_gives_its_reasons_where_the_parser_typed_the_party():
    opening = "本院认为，上诉人王某利用职务便利，非法收受他人财物，其行为构成受贿罪。"
    answered = (
        "关于上诉人王某上诉称其不构成受贿罪的上诉理由，经查，能够证实王某索贿的证据仅有证人闫某的一次证言。"
        "王某对此始终予以否认。"
        "因此，原判认定王某构成受贿罪事实不清，证据不足，故此上诉理由成立。"
    )
    assert fits_kind("reason", "CLAIMS", "上诉人王某上诉称其不构成受贿罪。") == 0  # the party's words
    assert fits_kind("reason", "CLAIMS", answered[: answered.index("。") + 1]) == 1  # 经查: the court's
    # a sentence after the court's answer goes on with its view; a conclusion drawn from a reason leads
    question = "二审为什么不再认定王某犯受贿罪？"
    ranked = rank_sentences(question, [("d:0", "OPINION", opening), ("d:1", "CLAIMS", answered)], "reason")
    assert ranked[0].text.startswith("因此，原判认定王某构成受贿罪事实不清")
    assert voiced("因此，原判认定事实不清。") and not voiced("被告人故意伤害他人身体。")


def test_a_question_asking_the_reasons_below_is_answered_from_where_the_judgment_reports_them():
    below = "一审法院认为，本案所涉楼房虽系原告婚前购买，但双方婚后已约定为夫妻共同财产。一审判决予以分割。"
    own = "本院认为，楼房系夫妻共同财产，一审认定并无不当，本院予以维持。"
    passages = [("d:0", "PROCEDURE", below), ("d:1", "OPINION", own)]
    ranked = rank_sentences("一审为什么把婚前买的楼房当成夫妻共同财产？", passages, "reason")
    assert ranked[0].text.startswith("一审法院认为")
    # the appeal court named: its own reasons
    ranked = rank_sentences("二审为什么认为楼房是夫妻共同财产？", passages, "reason")
    assert ranked[0].text.startswith("本院认为")


def test_a_phrase_closes_the_bracket_it_opens():
    text = "被告人林某、梁某共使用假币40张（4000元）。"
    a = text.index("40张")
    assert text[slice(*complete_span(text, a, text.index("元") + 1, "使用了多少假币？"))] == "40张（4000元）"


def test_a_judgments_own_instance_or_a_why_does_not_hide_what_a_question_asks():
    assert zh_asked_part("为什么法院没有当成夫妻共同债务处理？") is None  # 为什么 is no 什么法院
    assert zh_asked_part("由何法院管辖？") == ("court", None)
    assert zh_asked_part("这个借贷案，合议庭的审判长是哪位法官？") == ("office", "审判长")
    # of another instance, unless it is this one: the instance of the judgment's own number
    assert zh_asked_part("这个二审行政案是哪个法院审的？") is None
    assert zh_asked_part("这个二审行政案是哪个法院审的？", case_number="（2017）辽06行终22号") == (
        "court",
        None,
    )
    # what was appealed or reviewed is asked of the instance below, whatever this one is
    assert zh_asked_part("张某某不服哪个法院的判决而申请再审？", case_number="（2019）内民申441号") is None
    # the judgment's own title names it
    title = "张某移送执行裁定书"
    assert zh_asked_part(f"{title}的审理法院是哪个法院？", title=title) == ("court", None)
