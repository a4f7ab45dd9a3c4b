"""Cypher files: every query the code names exists in both dialects, and every Neo4j query
passes Neo4j's own analyzer (@neo4j-cypher/language-support, lintCypherQuery)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from kgp import cypher

REPO = Path(__file__).resolve().parent.parent
LINT = REPO / "tests" / "cypher_lint"
FIXTURES = REPO / "tests" / "fixtures"
SHARED_QUERIES = {
    "write_documents",
    "delete_document",
    "list_documents",
    "fulltext_search",
    "neighbours",
    "save_trace",
    "page_contents",
    "document_pages",
    "document_tables",
    "fetch_nodes",
    "count_labels",
    "count_relationships",
    "dump_nodes",
    "dump_relationships",
    "clear",
    "index_passage_fulltext",
}


def test_queries_used_by_both_stores_exist_in_both_dialects() -> None:
    for dialect in cypher.DIALECTS:
        assert set(cypher.names(dialect)) >= SHARED_QUERIES, dialect


def test_every_query_named_in_code_exists() -> None:
    named = set()
    for path in [*(REPO / "engine").rglob("*.py"), *(REPO / "agents").rglob("*.py")]:
        named |= set(re.findall(r'(?:run|load)\(\s*"([a-z_]+)"', path.read_text()))
        named |= set(re.findall(r'"((?:index|constraint|neighbours)_[a-z_]+)"', path.read_text()))
    available = set(cypher.names("neo4j")) | set(cypher.names("falkordb"))
    assert named and named <= available, named - available


def test_loader_refuses_unknown_and_path_like_names() -> None:
    with pytest.raises(cypher.QueryNotFoundError):
        cypher.load("neo4j", "no_such_query")
    with pytest.raises(cypher.QueryNotFoundError):
        cypher.load("neo4j", "../falkordb/clear")


def test_no_query_formats_values_into_text() -> None:
    for dialect in cypher.DIALECTS:
        for name in cypher.names(dialect):
            text = cypher.load(dialect, name)
            assert "{}" not in text and "%s" not in text, f"{dialect}/{name}"


def lint(files: list[Path]) -> tuple[int, dict[str, list[dict[str, object]]]]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Neo4j Cypher analyzer cannot run (CI installs it)")
    if not (LINT / "node_modules" / "@neo4j-cypher" / "language-support").is_dir():
        npm = shutil.which("npm") or pytest.skip("npm is not installed")
        subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--silent"], cwd=LINT, check=True)
    done = subprocess.run(
        [node, str(LINT / "lint.mjs"), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.returncode, json.loads(done.stdout)


@pytest.mark.slow
def test_neo4j_queries_pass_neo4j_analyzer() -> None:
    files = sorted((REPO / "cypher" / "neo4j").glob("*.cypher"))
    files += sorted((REPO / "cypher" / "browser").glob("*.cypher"))  # Browser's saved queries
    code, report = lint(files)
    problems = {Path(f).name: d for f, d in report.items() if d}
    assert code == 0 and problems == {}, json.dumps(problems, indent=1)
    assert len(report) == len(files)


def test_analyzer_reports_broken_queries() -> None:
    code, report = lint(sorted(FIXTURES.glob("*.cypher")))
    assert code == 1
    messages = {Path(f).name: [d["message"] for d in diags] for f, diags in report.items()}
    assert any("RETRUN" in m for m in messages["broken_syntax.cypher"])
    assert any(
        "db.index.vector.queryNode " in m + " " for m in messages["misspelled_procedure.cypher"]
    )
