"""Pure ingest functions: sentences, windows, keywords, text and Markdown readers."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from kgp.errors import DocumentError
from kgp.ingest.keywords import KeywordExtractor
from kgp.ingest.readers import MarkdownReader, TextReader, reader_for
from kgp.ingest.text import carried_over, dehyphenated, normalise, sentences, windows
from kgp.text import terms


def test_sentences_split_at_sentence_ends_and_keep_abbreviations() -> None:
    text = (
        "Dr. Smith went to Washington in 1999. He met the president, e.g. Mr. Jones there!\n\n"
        "A new paragraph starts here. Short. And it ends."
    )
    assert sentences(text) == [
        "Dr. Smith went to Washington in 1999.",
        "He met the president, e.g. Mr. Jones there!",
        "A new paragraph starts here. Short. And it ends.",  # short pieces join a neighbour
    ]


def test_sentences_do_not_end_at_initials_or_abbreviations_of_real_pdfs() -> None:
    # lines of real PDFs: an address, a Federal Register running head, a citation
    address = "Cupertino Union School District 1309 S. Mary Avenue Sunnyvale, CA 94087"
    header = "Federal Register / Vol. 85, No. 152 / Thursday, August 6, 2020 / Proposed Rules"
    cited = "The study by J. R. Tolkien and al. appeared in Vol. 3 of the series. It was cited."
    assert sentences(address) == [address]
    assert sentences(header) == [header]
    assert sentences(cited) == [cited]  # the last piece is short: it joins its neighbour
    rows = "Layoffs at ProCourier, Inc. were permanent this year. The depot in Aswan closes in May."
    assert sentences(rows) == [rows[:53], rows[54:]]


def test_a_heading_joins_the_first_sentence_under_it() -> None:
    text = (
        "(g) Installation of FCC OPS\n\n"
        "Install software version P12.1.2. Test it on the ground first.\n\n"
        "Part 3\n\nBackground\n\nOn October 29, 2018, a Boeing airplane was in an accident."
    )
    assert sentences(text) == [
        "(g) Installation of FCC OPS Install software version P12.1.2.",
        "Test it on the ground first.",
        "Part 3 Background On October 29, 2018, a Boeing airplane was in an accident.",
    ]
    # a paragraph that ends a sentence, or a long line, heads nothing
    assert sentences("Results were good.\n\nThe next paragraph starts here.") == [
        "Results were good.",
        "The next paragraph starts here.",
    ]
    assert sentences("Last words of a page without a full stop") == [
        "Last words of a page without a full stop"
    ]


def test_words_hyphenated_at_a_line_end_are_made_whole_by_the_documents_own_words() -> None:
    pages = [
        "Engines are tested by the manufac-\nturer. A high-\npressure pump is real-\ntime.",
        "The manufacturer tests the pump at high pressure in real-time. Dis-\nparities stay.",
    ]
    assert dehyphenated(pages) == [
        "Engines are tested by the manufacturer. A high-pressure pump is real-time.",
        "The manufacturer tests the pump at high pressure in real-time. Disparities stay.",
    ]
    # a hyphen before a capital or a number, or inside a line, is no line-end hyphenation
    assert dehyphenated(["Covid-\n19 and Franco-\nPrussian, a well-known"]) == [
        "Covid-\n19 and Franco-\nPrussian, a well-known"
    ]


def test_a_sentence_cut_by_a_page_break_is_made_whole_on_its_first_page() -> None:
    before = "The rated power is the power which the engine is capable of\n"
    after = "delivering after works trials. Then the next sentence.\n"
    assert carried_over(before, after) == (
        "The rated power is the power which the engine is capable of delivering after works "
        "trials.\n",
        "Then the next sentence.\n",
    )
    # a page that ends a sentence, or a next page that opens one, stay as they are
    assert carried_over("It ended.\n", "and yet. More.") == ("It ended.\n", "and yet. More.")
    assert carried_over("Results\n", "The next page.") == ("Results\n", "The next page.")
    # no sentence end on the next page: its first paragraph goes along
    assert carried_over("a list of", "items\n\nOther text.") == ("a list of items\n", "Other text.")
    # a name cut at its hyphen goes on, capital and all ("Soekarno-" | "Hatta")
    assert carried_over("after takeoff from Soekarno-\n", "Hatta Airport, in Jakarta. Next.") == (
        "after takeoff from Soekarno-Hatta Airport, in Jakarta.\n",
        "Next.",
    )
    assert carried_over("a range of 10-\n", "The next page.") == (
        "a range of 10-\n",
        "The next page.",
    )


@given(st.text(min_size=1, max_size=2000), st.integers(60, 400), st.integers(0, 50))
@example("0" * 61, 60, 0)  # one word longer than a window (found by this test in CI)
@example("ab " + "0" * 61 + " cd", 60, 1)
@example("0" * 29 + "\r" + "0" * 31, 60, 0)  # the only space before the window's middle
@example("0" * 58 + "\r" + "00", 60, 1)  # the overlap's start is the cut itself
@example("0" * 8 + "\r" + "0" * 52, 60, 9)  # the overlap reaches back before the window
def test_windows_cover_all_words_in_order(text: str, size: int, overlap: int) -> None:
    parts = windows(text, size, overlap)
    flat = normalise(text)
    words = flat.split()
    fits = all(len(w) <= size for w in words)
    assert all(len(p) <= size for p in parts)
    if overlap == 0:
        if fits:
            assert " ".join(parts).split() == words
        # nothing lost, repeated or reordered, even where a word longer than a window is cut
        assert "".join("".join(parts).split()) == "".join(words)
    joined = set(" ".join(parts).split())
    if fits:
        assert joined == set(words)
    else:  # every word that fits a window is kept whole; longer ones are cut into pieces
        assert {w for w in words if len(w) <= size} <= joined
        assert all(piece in flat for piece in joined)


def test_a_word_longer_than_a_window_is_cut_into_windows() -> None:
    assert windows("0" * 130, 60, 0) == ["0" * 60, "0" * 60, "0" * 10]


def test_windows_overlap() -> None:
    text = " ".join(f"w{i}" for i in range(200))
    parts = windows(text, 100, 30)
    assert len(parts) > 5
    for a, b in itertools.pairwise(parts):
        assert set(a.split()) & set(b.split())


def test_terms_drop_stopwords_and_short_numbers() -> None:
    assert terms("The 3 cats and 1999 dogs of Paris's museum") == [
        "cats",
        "1999",
        "dogs",
        "paris's",
        "museum",
    ]


def test_keywords_are_local_tfidf_plus_title() -> None:
    extractor = KeywordExtractor(count=2)
    out = extractor.extract(
        ["Paris is the capital of France.", "Berlin is the capital of Germany. Berlin is big."],
        title="European Capitals",
        extra=[("Cities",), ()],
    )
    assert out[0][:2] == ("france", "paris")
    assert out[1][0] == "berlin"
    assert out[0][-2:] == ("cities", "european capitals")
    assert out[1][-1] == "european capitals"


def test_markdown_sections_and_title(tmp_path: Path) -> None:
    text = "# Guide\n\nIntro text.\n\n## Install\n\nRun pip.\n\n```\n# not a heading\n```\n"
    doc = MarkdownReader().read(tmp_path / "g.md", text.encode())
    assert doc.title == "Guide"
    sections = doc.pages[0].sections
    assert [s.heading for s in sections] == ["Guide", "Install"]
    assert "# not a heading" in sections[1].text


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty document"),
        (b"   \n\n", "empty document"),
        (b"\x00\x01binary", "binary data"),
        ("caf\u00e9".encode("latin-1"), "not UTF-8"),
        (bytes(range(1, 32)) * 20, "binary data"),
    ],
)
def test_bad_text_files(tmp_path: Path, data: bytes, message: str) -> None:
    with pytest.raises(DocumentError, match=message):
        TextReader().read(tmp_path / "x.txt", data)


def test_utf8_bom_and_title(tmp_path: Path) -> None:
    doc = TextReader().read(tmp_path / "x.txt", "\ufeffFirst line\nmore".encode())
    assert doc.title == "First line"


def test_reader_registry() -> None:
    assert reader_for(Path("a.PDF")) is not None
    assert reader_for(Path("a.md")) is not None
    assert reader_for(Path("a.odt")) is None
