"""The grid clean-ups kgp's PDF reader applies to camelot's tables."""

from kgp.ingest.pdf_tables import labelled, unwrapped, without_leaders, wrapped_header


def test_leader_dots_join_their_label_and_their_columns_go() -> None:
    grid = [
        ["Category", "", "", "2010"],
        ["All ages . . .", ".", ". .", "303,858"],
        ["Severe . . .", "", ".", "38,284"],
    ]
    assert without_leaders(grid) == [
        ["Category", "2010"],
        ["All ages . . . . . .", "303,858"],
        ["Severe . . . .", "38,284"],
    ]


def test_a_lone_pair_of_dots_is_a_missing_value() -> None:
    grid = [["Finland", "..", ".."], ["Ireland", "20", ".."]]
    assert without_leaders(grid) == grid


def test_wrapped_text_lines_rejoin_their_row() -> None:
    grid = [
        ["Source", "Definition", "Examples"],
        ["Major", "Emissions of 10 tons", "Utilities,"],
        ["", "or more a year", "refineries"],
        ["Area", "Emissions of less", "Dry cleaners"],
    ]
    assert unwrapped(grid) == [
        ["Source", "Definition", "Examples"],
        ["Major", "Emissions of 10 tons\nor more a year", "Utilities,\nrefineries"],
        ["Area", "Emissions of less", "Dry cleaners"],
    ]


def test_numbers_and_notes_under_numbers_stay_rows() -> None:
    grid = [
        ["Q1 2010", "0.64", "0.72"],
        ["", "Source: Bloomberg", ""],
        ["Total", "Fused oxide", "Silicon"],
        ["", "2009", "2010"],
    ]
    assert unwrapped(grid) == grid


def test_a_label_a_line_off_its_numbers_joins_them() -> None:
    grid = [
        ["FY15 3rd Q TTL", "73,794", "96.0"],
        ["", "224,446", "100.7"],
        ["FY2015 TTL", "", ""],
        ["Investigative Matters", "", ""],
        ["", "426", "365"],
        ["Received by AUSAs", "", ""],
        ["Notes", "", ""],
    ]
    assert labelled(grid) == [
        ["FY15 3rd Q TTL", "73,794", "96.0"],
        ["FY2015 TTL", "224,446", "100.7"],  # below its values
        ["Investigative Matters\nReceived by AUSAs", "426", "365"],  # a label of two lines
        ["Notes", "", ""],  # beside no row of numbers: a row of its own
    ]


def test_a_header_wrapped_over_lines_is_one_row() -> None:
    grid = [
        ["", "", "Combined"],
        ["", "Percentage of", "weighted school"],
        ["", "desired population", "participation"],
        ["Education system", "coverage", "response rate"],
        ["Australia", "100", "93"],
    ]
    assert wrapped_header(grid) == [
        [
            "Education system",
            "Percentage of\ndesired population\ncoverage",
            "Combined\nweighted school\nparticipation\nresponse rate",
        ],
        ["Australia", "100", "93"],
    ]


def test_a_header_over_several_columns_stays_a_row_of_its_own() -> None:
    grid = [
        ["", "", "Stroke", ""],
        ["Characteristic", "no.", "Rate", "(95% CI)"],
        ["Female", "82,595", "42.6", "(42.3–42.9)"],
    ]
    assert wrapped_header(grid) == grid


def test_rows_of_words_without_numbers_under_them_are_no_header() -> None:
    grid = [["Program", "Budget"], ["Performance.gov", "$1.1M"], ["Challenges", "$0"]]
    assert wrapped_header(grid) == grid  # "$1.1M" is a number: no header row to join
    prose = [["Source", "Definition"], ["Major", "Emissions of ten tons"], ["Area", "Less"]]
    assert wrapped_header(prose) == prose
