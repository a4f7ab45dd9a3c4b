"""A document's title, which kgp shows, indexes as a keyword and links passages of other documents
by: the file's own title when it is a real one, else its first page's most prominent heading,
else the file name. Real files carry junk in both places: a metadata title that is a file name
("S2MNCE01birdisland.xlsx", "10811.exe"), an editor's default ("Microsoft Word - report"), a
form number ("B-1191") or a section name ("Proposed Rules"); a first page whose largest line is
a page number ("- 41 -", "5-15"), a rule of underscores, or a sentence running on from before."""

from __future__ import annotations

import re
from collections.abc import Iterable

_FILE_NAME = re.compile(
    r"\S+\.(?:pdf|docx?|xlsx?|xlsm|pptx?|rtf|txt|csv|html?|xml|exe|tmp|indd|qxd|pages|odt|ps)",
    re.IGNORECASE,
)
_EDITOR = ("microsoft word", "microsoft powerpoint", "microsoft excel")  # "... - name"
_DEFAULT = re.compile(r"(?:untitled|document|presentation|book)\s*\d*", re.IGNORECASE)
# a section of some larger publication, not what this document is about
_SECTION = re.compile(
    r"(?:(?:section|chapter|part|appendix|annex|page|table|figure|exhibit|attachment)"
    r"\s*[\w.\-–]*|proposed rules|rules and regulations|notices|presidential documents"
    r"|contents|table of contents|executive summary|summary|highlights|introduction"
    r"|background|methodology|abstract|preface|foreword|index|references|acknowledgements?"
    r"|continued|\(continued\)|draft|confidential)",
    re.IGNORECASE,
)
# a section's number and a name of a word or two ("2.2 Sampling", "5. Results"), not a title
_NUMBERED_SECTION = re.compile(r"\d{1,2}\.(?:\d{1,2}\.?)*\s+\S+(?:\s+\S+)?")
_FORM_NUMBER = re.compile(r"(?=\S*\d)\S*[-‐–_./]\S*")  # one token: digits and separators
_DATE = re.compile(
    r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{1,2},? \d{4}"
    r"|\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d{4}",
    re.IGNORECASE,
)
_DANGLING = frozenset(  # words a heading does not end on: it was cut off mid-phrase
    {"a", "an", "the", "of", "for", "and", "or", "to", "in", "on", "at", "by", "with"}
    | {"from", "is", "are", "was", "were", "how", "that", "which"}
)
_CAPTION = re.compile(r"(?:table|figure|fig\.|chart|exhibit|graph|map)\s*\d", re.IGNORECASE)
MAX_HEADING_WORDS = 14  # longer is a sentence, not a heading


def junk_title(text: str) -> bool:
    """Whether ``text`` cannot be a document's title (see the module's docstring)."""
    plain = " ".join(text.split())
    title = plain.strip(" :|")
    if not title:
        return True
    words = title.split()
    letters = sum(c.isalpha() for c in title)
    if letters < 3 or letters < 0.5 * len(title.replace(" ", "")):
        return True  # a page number, a form number, a rule, a date
    lowered = title.lower()
    return bool(
        not (title[0].isalnum() or title[0] in "\"'“‘([")  # a bullet, a mark
        or _CAPTION.match(title)  # a table's or a figure's caption
        or _FILE_NAME.fullmatch(title)
        or _FORM_NUMBER.fullmatch(title)
        or plain.endswith(":")  # a label whose value follows
        or (words[0].endswith(",") and len(words) > 4)  # a sentence: "Ultimately, the ..."
        or (_DATE.search(title) is not None and len(words) <= 4)
        or words[-1].endswith(",")
        or (len(words) > 1 and words[-1].lower() in _DANGLING)  # cut off mid-phrase
        or lowered.startswith(("source:", "sources:", "note:", "notes:"))
        or lowered.startswith(_EDITOR)
        or _DEFAULT.fullmatch(title)
        or _SECTION.fullmatch(lowered)
        or _NUMBERED_SECTION.fullmatch(title)
        or title[0].islower()  # runs on from a sentence before
        or len(words) > MAX_HEADING_WORDS
        or "intentionally left blank" in lowered
    )


def choose_title(metadata: str, headings: Iterable[tuple[float, str]], fallback: str) -> str:
    """The metadata title when it is a real one; else, of ``headings`` (lines of the first page
    as their font size and text, in reading order), the largest that is no junk, the first
    among equals; else ``fallback``."""
    meta = " ".join(metadata.split())
    if not junk_title(meta):
        return meta
    best: tuple[float, str] = (0.0, "")
    for size, text in headings:
        line = " ".join(text.split())
        if 3 <= len(line) <= 150 and size > best[0] + 0.5 and not junk_title(line):
            best = (size, line)
    return best[1] or fallback
