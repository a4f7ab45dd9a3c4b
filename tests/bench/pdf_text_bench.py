"""What kgp's PDF reader makes of the prose of the shared PDFs (``../shared/data/pdfs/`` and its
ICDAR folder), tables aside: each page's text cut into sentences as ingest cuts it (a sentence
that a page break cuts made whole on its first page).

    python -m tests.bench.pdf_text_bench [--titles]

Printed: the time to read them all (best of 3), sentences and words, sentences that are a bare
page number, short sentences repeated 3 or more times in their document (running heads), and
sentences that end at an initial or a common abbreviation (a sentence cut in two), and short
lines alone that end no sentence (headings, which join the sentence under them); with
``--titles``, each PDF's title, to be read one by one. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter
from pathlib import Path

from kgp.errors import DocumentError
from kgp.ingest.builder import flowing
from kgp.ingest.document import ReadDocument
from kgp.ingest.pdf import PdfReader
from kgp.ingest.text import sentences

PDFS = Path(__file__).resolve().parents[3] / "shared" / "data" / "pdfs"
ENDS = re.compile(r"[.!?:;][\"'”’)\]]*$")  # a sentence's end
PAGE_NUMBER = re.compile(
    r"[-–—(\[]?\s*(?:page|p\.|pg\.?)?\s*(?:\d{1,4}|[ivx]{1,6})"
    r"(?:\s*(?:of|/|[-–])\s*\d{1,4})?\s*[-–—)\]]?",
    re.IGNORECASE,
)
CUT = re.compile(  # a sentence ending here was cut in two (an independent list: kgp's own aside)
    r"(?:(?:^|\s)[A-Z]\.|\b(?:Vol|No|Nos|pp|p|Inc|Ltd|Co|Corp|Jr|Sr|Prof|Gen|Gov|Sen|Rep|Ave"
    r"|Blvd|Rd|Dept|Univ|approx|cf|al|Art|Sec|Ch|Eq|Ref|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept"
    r"|Oct|Nov|Dec|U\.S|U\.K)\.)$"
)


def read_all(files: list[Path]) -> dict[Path, ReadDocument]:
    out = {}
    for path in files:
        try:
            out[path] = PdfReader().read(path, path.read_bytes(), tables=False)
        except DocumentError:
            continue  # unreadable or text-free: not prose
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--titles", action="store_true", help="print each PDF's title")
    args = parser.parse_args()
    files = sorted(PDFS.glob("*.pdf")) + sorted(PDFS.glob("icdar2013/*.pdf"))
    if not files:
        raise SystemExit(f"no PDFs at {PDFS}; the shared data folder sits beside the repository")
    seconds = []
    for _ in range(3):
        started = time.perf_counter()
        read = read_all(files)
        seconds.append(time.perf_counter() - started)
    figures = Counter({"documents": len(read)})
    for path, document in read.items():
        cut = [s for _, sec in flowing(document.pages) for s in sentences(sec.text)]
        shapes = Counter(re.sub(r"\d+", "#", s.lower()) for s in cut)
        figures["sentences"] += len(cut)
        figures["words"] += sum(len(s.split()) for s in cut)
        figures["bare_page_numbers"] += sum(bool(PAGE_NUMBER.fullmatch(s.strip())) for s in cut)
        figures["repeated_short"] += sum(
            len(s) < 120 and shapes[re.sub(r"\d+", "#", s.lower())] >= 3 for s in cut
        )
        figures["cut_at_abbreviation"] += sum(bool(CUT.search(s)) for s in cut)
        figures["lone_lines"] += sum(len(s) <= 120 and not ENDS.search(s) for s in cut)
        if args.titles:
            print(f"{path.name:40s} {document.title!r}")
    summary = {**figures, "read_s": round(min(seconds), 2)}
    print(
        f"{summary['documents']} PDFs read in {summary['read_s']} s (best of 3, no tables): "
        f"{summary['sentences']} sentences, {summary['words']} words, "
        f"{summary['bare_page_numbers']} bare page numbers, "
        f"{summary['repeated_short']} short sentences repeated 3+ times in their document, "
        f"{summary['cut_at_abbreviation']} ending at an initial or abbreviation, "
        f"{summary['lone_lines']} short lines alone that end no sentence (headings)"
    )
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
