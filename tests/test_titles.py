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
