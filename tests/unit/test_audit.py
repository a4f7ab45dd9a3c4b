"""The audit trail (kgp.audit): entries appended whole and owner-only, read back through every
rotation in order, filtered by key, time, document and action; old files pruned."""

from __future__ import annotations

import json
import os
import stat
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from kgp.audit import AuditLog, parse_since
from kgp.errors import ConfigurationError


def test_a_rotation_loses_nothing_and_entries_come_back_in_order(tmp_path: Path) -> None:
    trail = AuditLog(tmp_path / "audit", max_bytes=600)
    for n in range(40):
        trail.append(
            {
                "key": f"k{n % 3}",
                "action": "ask",
                "question": f"question {n}",
                "returned": [f"doc{n % 5}.md"],
                "status": 200,
            }
        )
    assert len(trail.files()) > 5, "the trail was set aside several times"
    assert all(f.stat().st_size <= 600 for f in trail.files())
    entries = list(trail.read())
    assert [e["question"] for e in entries] == [f"question {n}" for n in range(40)]
    assert stat.S_IMODE(trail.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(trail.folder.stat().st_mode) == 0o700
    assert [e["question"] for e in trail.read(key="k1")][:2] == ["question 1", "question 4"]
    assert len(list(trail.read(document="doc2.md"))) == 8
    assert list(trail.read(action="upload")) == []
    later = datetime.now(UTC) + timedelta(seconds=5)
    assert list(trail.read(since=later)) == []


def test_a_torn_line_is_skipped_and_old_files_go(tmp_path: Path) -> None:
    trail = AuditLog(tmp_path / "audit", max_bytes=200, keep_days=1)
    trail.append({"key": "a", "action": "ask"})
    with trail.path.open("a") as end:
        end.write('{"key": "b", "act')  # a writer killed mid-line
    trail.append({"key": "c", "action": "ask"})
    assert [e["key"] for e in trail.read()] == ["a", "c"]
    trail.append({"key": "c", "action": "ask", "question": "y" * 150})  # (sets one aside)
    old = trail.files()[0]
    assert old.name.startswith("audit-")
    week_ago = time.time() - 7 * 86400
    os.utime(old, (week_ago, week_ago))
    for n in range(5):
        trail.append({"key": "d", "action": "ask", "question": "x" * 80, "n": n})
    assert old not in trail.files(), "a file set aside past keep_days is deleted"
    assert json.loads(trail.path.read_text().splitlines()[-1])["n"] == 4


def test_since_takes_a_time_or_a_span() -> None:
    assert parse_since("2026-12-01").tzinfo is UTC
    assert abs((datetime.now(UTC) - parse_since("12h")).total_seconds() - 43200) < 5
    assert abs((datetime.now(UTC) - parse_since("7d")).days - 7) <= 1
    with pytest.raises(ConfigurationError, match="--since 'yesterday'"):
        parse_since("yesterday")


def test_the_trail_keeps_as_much_of_a_question_as_a_retrieval_reads() -> None:
    from kgp.serve.app import asked
    from kgp.settings import MAX_QUESTION_CHARS

    assert asked("Which station?") == {"question": "Which station?"}
    long = asked("x" * (MAX_QUESTION_CHARS * 250))  # a body of a megabyte is not kept whole
    assert len(long["question"]) == MAX_QUESTION_CHARS
    assert long["question_chars"] == MAX_QUESTION_CHARS * 250
