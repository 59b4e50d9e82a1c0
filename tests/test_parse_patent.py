"""Patents: USPTO XML of every era, EP XML, Greenbook text and patent PDFs, checked against the XML's
own claim markup and the files' own fields."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.config import ParseConfig
from pipeline.errors import UnsupportedFormat
from pipeline.parsing import build, iter_documents, parse_file
from pipeline.parsing.greenbook import records
from pipeline.parsing.kinds.patent import claim_dependencies
from pipeline.parsing.patent_xml import EP, SCHEMAS, claim_refs, claims_of
from pipeline.parsing.xmldoc import _local, extract, parse_xml, pieces, read_bytes
from pipeline.records import BlockType as T
from pipeline.records import DocKind

PATENTS = "en/patents"


def _xml_files(shared_data: Path) -> list[Path]:
    root = shared_data / PATENTS
    return sorted(
        p
        for p in root.rglob("*")
        if p.name.lower().endswith((".xml", ".xml.gz")) and "cpc" not in p.name.lower()
    )


def test_claims_and_dependencies_match_the_xml(shared_data):
    """Over every USPTO/EP XML document in the shared data: one CLAIM block per <claim>, and the claims a
    claim's wording depends on equal those its XML markup references."""
    config = ParseConfig()
    docs = claims = exact = covered = 0
    for path in _xml_files(shared_data):
        for piece in pieces(read_bytes(path, config.max_decompressed_bytes)):
            root, _ = parse_xml(piece, str(path))
            schema = SCHEMAS.get(_local(root.tag))
            if schema is None:
                continue  # sequence listings that travel in the bulk files
            doc = build(extract(piece, str(path)), str(path), "0" * 16, config)
            xml_claims = claims_of(root, schema)
            blocks = [b for b in doc.blocks if b.type is T.CLAIM]
            assert len(blocks) == len(xml_claims), path.name
            docs += 1
            for claim, block in zip(xml_claims, blocks, strict=True):
                refs = claim_refs(claim, schema)
                if schema is EP and not refs:
                    continue  # EP marks no references; nothing to compare against
                claims += 1
                found = claim_dependencies(block.text)
                exact += found == refs
                # The XML marks the two ends of "claims 1 to 3"; the wording also yields claim 2.
                covered += set(refs) <= set(found)
    print(
        f"\npatent XML: {docs} documents; claim dependencies equal to the XML markup: "
        f"{exact}/{claims} = {exact / claims:.2%} (markup covered {covered / claims:.2%})"
    )
    assert docs > 500
    assert exact / claims >= 0.97 and covered / claims >= 0.99


def test_every_era_has_metadata(shared_data):
    eras = {
        "uspto_samples_go_uspto/grant/v4-5-B2.xml": ("11147202", 2021),
        "uspto_samples_go_uspto/grant/v2-5-B2.xml": ("06530116", 2003),
        "uspto_samples_go_uspto/application/v1-5-A1_2.xml": ("20010000002", 2001),
        "ep_samples_go_epo_eps/grant/v1-5-B1.xml.gz": ("3404678", 2021),
    }
    for rel, (number, year) in eras.items():
        doc = parse_file(shared_data / PATENTS / rel)
        assert doc.kind is DocKind.PATENT and doc.language == "en"
        assert doc.meta.patent_number == number and doc.meta.date.year == year
        assert doc.title and doc.meta.classes
        assert any(p.role == "inventor" for p in doc.meta.parties)
        types = {b.type for b in doc.blocks}
        assert {T.HEADER, T.CLAIM, T.DESCRIPTION} <= types or {T.HEADER, T.CLAIM, T.SUMMARY} <= types
        assert all(b.bbox is None and b.page is None for b in doc.blocks)
    ep = parse_file(shared_data / PATENTS / "ep_samples_go_epo_eps/grant/v1-5-B1.xml.gz")
    assert ep.title == "HIGH VOLTAGE ASSEMBLY AND METHOD TO OPERATE THE HIGH VOLTAGE ASSEMBLY"


def test_greenbook(shared_data):
    for path in sorted((shared_data / PATENTS / "uspto_samples_patentpublicdata/greenbook").iterdir()):
        doc = parse_file(path)
        fields = dict(next(f for r, f in records(path.read_text(encoding="utf-8")) if r == "PATN"))
        n_claims = sum(
            1
            for r, f in records(path.read_text(encoding="utf-8"))
            if r == "CLMS"
            for tag, _ in f
            if tag == "NUM"
        )
        assert doc.kind is DocKind.PATENT and doc.title == fields["TTL"]
        assert len([b for b in doc.blocks if b.type is T.CLAIM]) == n_claims
        assert doc.meta.patent_number == fields["WKU"][:-1].lstrip("0")


def test_bulk_file_gives_one_document_per_patent(shared_data):
    path = shared_data / PATENTS / "uspto_samples_go_uspto/test.xml"
    docs = list(iter_documents(path))
    assert len(docs) == 2 and len({d.doc_id for d in docs}) == 2
    assert parse_file(path).doc_id == docs[0].doc_id


def test_unknown_and_broken_xml(shared_data):
    with pytest.raises(UnsupportedFormat, match="class-scheme"):
        parse_file(shared_data / PATENTS / "uspto_samples_patentpublicdata/cpcScheme/cpc-scheme-A01L.xml")
    broken = parse_file(
        shared_data / PATENTS / "uspto_samples_patent_parsing_tools_pypi/US08613112-lackofnode.XML"
    )
    assert broken.meta.patent_number == "08613112" and any(b.type is T.CLAIM for b in broken.blocks)


@pytest.mark.parametrize(
    "name",
    [
        "us-1781541-einstein-refrigerator",
        "us-3353115-maiman-ruby-laser",
        "us-3858232-boyle-smith-ccd",
        "us-4136359-wozniak-apple",
        "us-6285999-pagerank",
    ],
)
def test_patent_pdf_claims_found(shared_data, name):
    doc = parse_file(shared_data / PATENTS / "pdf" / f"{name}.pdf", ParseConfig(ocr=False))
    assert doc.kind is DocKind.PATENT
    claims = [b for b in doc.blocks if b.type is T.CLAIM]
    assert claims and any(b.text.lstrip().startswith("1.") or " 1. " in b.text[:200] for b in claims)
    first = doc.blocks.index(claims[0])
    assert all(b.type is T.CLAIM for b in doc.blocks[first:])


@pytest.mark.parametrize("name,n", [("us-6285999-pagerank", 29), ("us-3858232-boyle-smith-ccd", 32)])
def test_two_column_reading_order(shared_data, name, n):
    """Claims printed in two columns come out one block per claim, numbered 1..n in order."""
    doc = parse_file(shared_data / PATENTS / "pdf" / f"{name}.pdf", ParseConfig(ocr=False))
    numbers = [
        int(m.group(1)) for b in doc.blocks if b.type is T.CLAIM if (m := re.match(r"(\d+)\s*\.", b.text))
    ]
    assert numbers == list(range(1, n + 1))
