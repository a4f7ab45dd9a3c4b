"""Pure text functions: a text cut into passages (sentences or windows). Words are
``kgp.text``'s."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9À-ÖØ-Þ])")
_PARAGRAPH = re.compile(r"\n\s*\n")
_SPACE = re.compile(r"\s+")
# a sentence does not end at these: abbreviations a capital or a number follows, and initials
# ("J. Smith", "1309 S. Mary Avenue")
_ABBREVIATION_END = re.compile(
    r"(?:^|[\s(/])(?:[A-Z]|e\.g|i\.e|etc|vs|Mr|Mrs|Ms|Dr|Prof|Jr|Sr|St|Mt|Ft|No|Nos|Vol|Vols"
    r"|pp?|Fig|Figs|Tab|Eq|Ref|Art|Sec|Ch|Para|Inc|Ltd|Co|Corp|Bros|Dept|Univ|Assn|Ave|Blvd|Rd"
    r"|Hwy|Gen|Gov|Sen|Rep|Capt|Lt|Sgt|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
    r"|approx|cf|al|U\.S|U\.K|U\.N|E\.U)\.$"
)
MIN_SENTENCE = 25
MAX_HEADING = 120  # a paragraph of one line this long at most, without a sentence's end, heads
_ENDS_SENTENCE = re.compile(r"[.!?:;。！？][\"'”’)\]]*$")


@dataclass(frozen=True, slots=True)
class Piece:
    """A passage before it is numbered: its text and the page it starts on."""

    page: int
    text: str


def normalise(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def sentences(text: str) -> list[str]:
    """Sentences of a text: paragraphs split at sentence ends; very short pieces join the next,
    and a heading (a short paragraph that ends no sentence) joins the first sentence under it."""
    out: list[str] = []
    heading = ""
    for paragraph in _PARAGRAPH.split(text):
        flat = normalise(paragraph)
        if not flat:
            continue
        parts = _SENTENCE_END.split(flat)
        merged: list[str] = []
        for part in parts:
            if merged and (len(merged[-1]) < MIN_SENTENCE or _ABBREVIATION_END.search(merged[-1])):
                merged[-1] = f"{merged[-1]} {part}"
            else:
                merged.append(part)
        if len(merged) > 1 and len(merged[-1]) < MIN_SENTENCE:
            last = merged.pop()
            merged[-1] = f"{merged[-1]} {last}"
        if heading:
            merged[0] = f"{heading} {merged[0]}"
            heading = ""
        if len(merged) == 1 and _heads(merged[0]):
            heading = merged.pop()
        out.extend(merged)
    if heading:
        out.append(heading)
    return out


_FIRST_END = re.compile(r"[.!?。！？][\"'”’)\]]*(?=\s|$)|\n\s*\n")  # a sentence's or a paragraph's


def carried_over(before: str, after: str) -> tuple[str, str]:
    """Two texts that a page break parts, with a sentence it cuts made whole on the first: when
    ``before`` ends without a sentence's end and ``after`` opens in lower case (or ``before``
    ends in a word cut at a hyphen, which ``after`` goes on with), the words of ``after`` up to
    its first sentence's end (or paragraph's) go to the end of ``before``."""
    head, tail = before.rstrip(), after.lstrip()
    cut_word = head.endswith("-") and head[-2:-1].isalpha()  # "Soekarno-" | "Hatta ..."
    if not head or not tail or _ENDS_SENTENCE.search(head) or not (tail[0].islower() or cut_word):
        return before, after
    end = _FIRST_END.search(tail)
    cut = end.end() if end else len(tail)
    return f"{head}{'' if cut_word else ' '}{tail[:cut].strip()}\n", tail[cut:].lstrip()


_LINE_END_HYPHEN = re.compile(r"\b(\w+)-\n[ \t]*([a-z]\w*)")
_WORD = re.compile(r"\w+(?:-\w+)*")


def dehyphenated(texts: list[str]) -> list[str]:
    """Texts (a document's pages, line by line) with the words that a line's end hyphenates
    ("manufac-" | "turer") made whole, the document's own words deciding how: as one word when
    the document writes it so elsewhere ("manufacturer") or when either part is no word of its
    own ("manufac"); with its hyphen when the document writes it so ("real-time") or both parts
    are words of it ("high" | "pressure")."""
    rest = [_LINE_END_HYPHEN.sub(" ", text) for text in texts]  # the parts are no evidence
    seen = {w.lower() for text in rest for w in _WORD.findall(text)}
    seen |= {part for word in list(seen) for part in word.split("-")}

    def whole(match: re.Match[str]) -> str:
        first, second = match.group(1), match.group(2)
        joined = f"{first}{second}".lower()
        if joined in seen:
            return f"{first}{second}"
        if f"{first}-{second}".lower() in seen or (
            first.lower() in seen and second.lower() in seen and len(first) > 2
        ):
            return f"{first}-{second}"
        return f"{first}{second}"

    return [_LINE_END_HYPHEN.sub(whole, text) for text in texts]


def _heads(paragraph: str) -> bool:
    return len(paragraph) <= MAX_HEADING and not _ENDS_SENTENCE.search(paragraph)


def printed_within(copy: str, text: str) -> bool:
    """Whether ``copy`` reads as ``text`` printed a second time, perhaps missing characters: its
    letters and digits are ``text``'s or some of them, in order (for a mark without any, its
    characters). A PDF that overprints its text for a bold look gives such copies."""
    own, whole = _alnum(copy), _alnum(text)
    if not own:
        own, whole = copy.strip(), text
    rest = iter(whole)
    return bool(own) and all(ch in rest for ch in own)


def _alnum(text: str) -> str:
    return "".join(ch for ch in text if ch.isalnum())


def windows(text: str, size: int = 250, overlap: int = 50) -> list[str]:
    """Windows of about ``size`` characters cut at word boundaries, overlapping by ``overlap``."""
    flat = normalise(text)
    if len(flat) <= size:
        return [flat] if flat else []
    step = max(1, size - overlap)
    out: list[str] = []
    start = 0
    while start < len(flat):
        end = min(len(flat), start + size)
        if end < len(flat):
            cut = flat.rfind(" ", start + step // 2, end)
            if cut <= start:  # a shorter window rather than a word cut that need not be
                cut = flat.rfind(" ", start + 1, end)
            end = cut if cut > start else end
        out.append(flat[start:end].strip())
        if end >= len(flat):
            break
        # the next window starts at the first word at or after the overlap's start (at latest
        # the word after the cut), inside a word only where the cut was inside one
        nxt = max(end - overlap, start + 1)
        space = flat.find(" ", nxt - 1)
        start = space + 1 if 0 <= space <= end else nxt
    return [w for w in out if w]
