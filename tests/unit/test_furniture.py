"""Page furniture: page numbers and running heads or feet leave the page's text; a table's cells in
a margin, a number beside other cells and a running line's first appearance stay."""

from __future__ import annotations

from kgp.ingest.furniture import Line, furniture

H = 800.0  # a page's height: the margins are its top and bottom 80 points


def line(page: int, top: float, text: str, x0: float = 50.0, x1: float = 300.0) -> Line:
    return Line(page, (x0, top, x1, top + 10), text, H)


def texts(found: list[Line]) -> list[tuple[int, str]]:
    return sorted((x.page, x.text) for x in found)


def test_page_numbers_and_running_heads_are_furniture() -> None:
    pages = []
    for n in range(1, 6):
        pages += [
            line(n, 20, "Federal Register / Vol. 85, No. 152 / Proposed Rules"),
            line(n, 300, f"Body text of page {n} about the 737 MAX directive."),
            line(n, 770, f"- {n + 40} -"),
        ]
    found = texts(furniture(pages, 5))
    heads = [(n, "Federal Register / Vol. 85, No. 152 / Proposed Rules") for n in range(1, 6)]
    numbers = [(n, f"- {n + 40} -") for n in range(1, 6)]
    assert found == sorted(heads + numbers), "the head goes on its first page too: nothing above"


def test_a_table_header_repeated_at_the_top_of_each_page_is_kept_once() -> None:
    pages = [line(1, 20, "Annual report on layoffs"), line(1, 40, "Notice Date Company")]
    for n in range(2, 6):
        pages += [line(n, 40, "Notice Date Company"), line(n, 300, f"Row of page {n}.")]
    found = texts(furniture(pages, 5))
    assert found == [(n, "Notice Date Company") for n in range(2, 6)], "kept under the title"


def test_table_cells_in_the_margins_stay() -> None:
    pages = []
    names = ["Actavis, Inc.", "Boeing Company", "Kixeye", "ProCourier", "Bosch Healthcare"]
    for n, name in enumerate(names, start=1):
        pages += [
            line(n, 300, "Body text."),
            # a table's last row: a number beside other cells, and a value repeated in place
            line(n, 770, "48", 50, 80),
            line(n, 770, name, 100, 200),
            line(n, 770, "Layoff Permanent", 220, 300),
        ]
    assert furniture(pages, 5) == []


def test_a_number_with_text_beyond_it_is_no_page_number() -> None:
    pages = [line(1, 700, "Body text."), line(1, 750, "12"), line(1, 775, "Footnote text.")]
    assert furniture(pages, 1) == []


def test_a_running_head_down_the_outer_edge_of_facing_pages_is_furniture() -> None:
    pages = []
    for n in range(1, 9):
        head = ["Shift work", "interventions"] if n % 2 else ["ER", "29,2"]
        x0 = 440.0 if n % 2 else 20.0
        pages += [line(n, 82, head[0], x0, x0 + 50), line(n, 96, head[1], x0, x0 + 50)]
        pages += [line(n, 148, str(162 + n), x0, x0 + 20)]
        pages += [line(n, 80 + 12 * k, f"Body line {k} of page {n}.", 116, 400) for k in range(40)]
    found = texts(furniture(pages, 8))
    assert len(found) == 8 * 3 and not any(text.startswith("Body") for _, text in found)


def test_a_volumes_page_number_and_a_footer_row_crossed_by_a_gutter_stamp_are_furniture() -> None:
    """The Federal Register: a five-digit page number beside the running head, a footer row of
    production codes, and a stamp set upright in the gutter whose box reaches into that row."""
    pages = []
    for n in range(1, 6):
        pages += [
            line(n, 20, "Federal Register / Vol. 85, No. 152 / Proposed Rules", 120, 494),
            line(n, 20, f"{47697 + n}", 536, 570),
            line(n, 300, f"Body text of page {n} about the 737 MAX directive.", 45, 560),
            line(n, 770, "VerDate Sep<11>2014", 25, 93),
            line(n, 770, f"Frm 0000{n}", 239, 271),
            Line(n, (18.0, 667.0, 23.0, 781.0), "jbell on DSKJLSW7X2PROD with PROPOSALS", H),
        ]
    found = texts(furniture(pages, 5))
    for n in range(1, 6):
        assert (n, f"{47697 + n}") in found
        assert (n, "VerDate Sep<11>2014") in found and (n, f"Frm 0000{n}") in found
    assert not any("Body text" in text for _, text in found)
