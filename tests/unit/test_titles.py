"""A document's title: the file's own when it is a real one, else its first page's most prominent
heading, else the file name; junk from real files (file names, editors' defaults, form numbers,
section names, page numbers, rules, dates, sentences) is never taken."""

from __future__ import annotations

import pytest
from kgp.ingest.titles import choose_title, junk_title

JUNK = [
    "10811.exe",
    "S2MNCE01birdisland.xlsx",
    "B-1191",
    "DARPA‐BAA‐15‐58",
    "88300 162..177",
    "Microsoft Word - 151201DSP-Fond-581-90D",
    "Untitled",
    "Document1",
    "Proposed Rules",
    "SECTION 2",
    "Page 12",
    "- 41 -",
    "5-15",
    "ES-2",
    "__________________________",
    "his page intentionally left blank.",
    "Table 8.18 - Leading brands by market segment",
    "Source: LSA, 1998",
    "TEST COMMENTS:",
    "2.2 Sampling",
    "5. Results",
    "September 29, 2015",
    "Ultimately, the most important comparison is inter-temporal - how is aggregate",
    "Shift work interventions for",
    "Parents of children in the Head Start group reported that their children were read to"
    " more often",
]
REAL = [
    "Eliquis, INN-apixaban",
    "Annual Health Survey 2010-11",
    "E-PRTR pollutants and their thresholds",
    "HIGHLIGHTS FROM PIRLS 2011",
    "3-Year-Old Cohort",
    "Documentation of the 2012 harvest trials",
    "ISU Grand Prix 2012 Paris, FRA",
    "Coronary Heart Disease and Stroke Deaths — United States, 2006",
    "东北电气发展股份有限公司",
    "12 Angry Men",
    "3.2 Social and Emotional Health",
]


@pytest.mark.parametrize("text", JUNK)
def test_junk_is_no_title(text: str) -> None:
    assert junk_title(text)


@pytest.mark.parametrize("text", REAL)
def test_real_titles_are_kept(text: str) -> None:
    assert not junk_title(text)


def test_the_largest_real_heading_stands_in_for_a_junk_metadata_title() -> None:
    lines = [(9.0, "- 41 -"), (14.0, "Proposed Rules"), (12.0, "Credit Derivatives Markets")]
    assert choose_title("10811.exe", lines, "eu-002") == "Credit Derivatives Markets"
    assert choose_title("Art in Machine Learning", lines, "x") == "Art in Machine Learning"
    assert choose_title("", [(20.0, "Page 12")], "us-028") == "us-028"


def _line(text: str, size: float, x: float, baseline: float) -> dict[str, object]:
    """A line of PyMuPDF's page "dict"."""
    return {
        "spans": [{"text": text, "size": size}],
        "bbox": (x, baseline - size, x + 100, baseline),
    }


def test_headings_beside_each_other_printed_twice_and_a_paragraphs_lines() -> None:
    from kgp.ingest.pdf import _headings

    title = _line("Harvest Report for Minnesota Central", 9.1, 65, 99)
    beside = _line("ALL SEASON TEST", 9.1, 473, 99)
    grower = _line("Doug Toreen, Renville County", 9.1, 473, 112)
    heading_block = [
        title,
        beside,
        title,
        beside,
        grower,
        _line("1.3 - 2.0 MAT. GROUP", 7.5, 474, 112),
    ]
    rows = [
        _line(f"Kruger K2-19{n:02} RR2Y 1.9 R Ac,PV 56.4 7.6 0 126.3 $846", 8.3, 82, 240 + 12 * n)
        for n in range(20)
    ]
    numbered = [_line("5.2.", 11.0, 60, 60), _line("Continuing vocational training", 11.0, 90, 60)]
    paragraph = [
        _line(f"body text of a paragraph, line {n}", 8.3, 65, 700 + 10 * n) for n in range(5)
    ]
    page = {"blocks": [{"lines": lines} for lines in (heading_block, rows, numbered, paragraph)]}
    assert _headings(page) == [
        (9.1, "Harvest Report for Minnesota Central"),  # its own run: a line beside it
        (9.1, "ALL SEASON TEST Doug Toreen, Renville County"),  # stacked: one heading
        (7.5, "1.3 - 2.0 MAT. GROUP"),  # a block set larger than the page's text: no paragraph
        (11.0, "5.2."),
        (11.0, "Continuing vocational training"),
    ]  # the rows and the paragraph are the page's text size: no headings
    assert (
        choose_title("S2MNCE01birdisland.xlsx", _headings(page), "x")
        == "Continuing vocational training"
    )
