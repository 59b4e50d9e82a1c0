"""Hostile text and paths on the terminal, and questions `ldx ask` must refuse: one line each."""

from __future__ import annotations

import json

import pytest
from run_tables import write_run_tables
from typer.testing import CliRunner

from flows.cli import app
from retrieval.ask import MAX_K, Asker, BadQuestion

HOSTILE = "Held \x1b[2J\x1b]0;pwned\x07 [link=file:///etc/passwd]click[/link] [bold]x[/] and [/] end."


def test_parse_prints_document_text_literally(tmp_path):
    path = tmp_path / "hostile.txt"
    path.write_text(f"{HOSTILE}\n\nA second paragraph of the judgment.\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["parse", str(path), "--max-chars", "0"])
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.output and "\x07" not in res.output
    assert "\\x1b[2J" in res.output  # shown, escaped
    assert "[link=file:///etc/passwd]click[/link]" in res.output and "[/] end." in res.output


def test_a_failure_naming_a_markup_path_is_one_line(tmp_path):
    folder = tmp_path / "x["  # the path holds "[/]"
    folder.mkdir()
    bad = folder / "]\x1b[31mred.pdf"
    bad.write_bytes(b"not a pdf at all")
    res = CliRunner().invoke(app, ["parse", str(bad)])
    assert res.exit_code == 2
    assert "x[/]" in res.output and "\x1b" not in res.output and len(res.output.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ask")
    src = tmp / "opinion.txt"
    src.write_text(
        "The court held the contract void.\n\nThe appeal is dismissed with costs.\n", encoding="utf-8"
    )
    write_run_tables(tmp / "out", src)
    return tmp / "out"


@pytest.mark.parametrize("question", ["", "   ", "?!.,;:"])
def test_ask_refuses_a_question_without_words(small_run, tmp_path, question):
    args = ["ask", question, "--index", str(small_run), "-s", f"model.checkpoint={tmp_path / 'none.pt'}"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and "no words to search for" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_ask_clamps_k_and_says_so(small_run, tmp_path):
    session = Asker(small_run, checkpoint=str(tmp_path / "none.pt"))
    answer = session.ask("contract void", k=100_000)
    assert 0 < len(answer.citations) <= MAX_K and any("lowered" in n for n in answer.notes)
    with pytest.raises(BadQuestion):
        session.ask("contract", k=0)


def test_ask_over_a_truncated_segments_part_is_one_line(small_run, tmp_path):
    import shutil

    out = tmp_path / "out"
    shutil.copytree(small_run, out)
    part = next((out / "segments").rglob("*.parquet"))
    part.write_bytes(part.read_bytes()[:100])
    res = CliRunner().invoke(
        app, ["ask", "contract", "--index", str(out), "-s", f"model.checkpoint={tmp_path / 'n.pt'}"]
    )
    assert res.exit_code == 2 and "segments table cannot be read" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_ask_json_keeps_control_characters_escaped(small_run, tmp_path):
    res = CliRunner().invoke(
        app,
        ["ask", "appeal", "--index", str(small_run), "--json", "-s", f"model.checkpoint={tmp_path / 'n.pt'}"],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["citations"]
