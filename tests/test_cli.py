"""The CLI: every command documented, JSON output, one-line errors and non-zero exits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from kgp import open as kgp_open
from kgp.cli import app
from kgp.errors import ConfigurationError
from kgp.stores import FalkorStore
from typer.main import get_command
from typer.testing import CliRunner

from tests.graphs import DIM, make_document

runner = CliRunner()


def kgp(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The installed console script, as a user runs it."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("KGP_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "kgp", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
    )


def test_every_command_has_help_with_an_example() -> None:
    group = get_command(app)
    commands = getattr(group, "commands", {})
    assert set(commands) >= {"doctor", "stats"}
    for name, command in commands.items():
        assert command.help and "Example: kgp" in command.help, name
        result = runner.invoke(app, [name, "--help"])
        assert result.exit_code == 0, name


def test_stats_json_on_a_graph(data_dir: Path) -> None:
    with FalkorStore(data_dir=data_dir) as store:
        store.ensure_schema(DIM)
        store.write_documents([make_document("a.txt", 4)])
    done = kgp("--data-dir", str(data_dir), "stats", "--json")
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    assert stats["labels"]["Passage"] == 4
    assert stats["relationships"]["NEXT"] == 3
    assert stats["groups"] == {"public": 1}, "documents per access group"
    table = kgp("--data-dir", str(data_dir), "stats")
    assert "Passage" in table.stdout and "HAS_KEYWORD" in table.stdout
    assert "documents readable by" in table.stdout


def test_stats_on_an_empty_data_dir(data_dir: Path) -> None:
    data_dir.mkdir()
    done = kgp("--data-dir", str(data_dir), "stats", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"labels": {}, "relationships": {}, "groups": {}}


def test_trace_reports_queries(data_dir: Path) -> None:
    data_dir.mkdir()
    done = kgp("--data-dir", str(data_dir), "--trace", "stats", "--json")
    assert "trace count_labels" in done.stderr  # the graph's counts: the caller reads all
    assert "trace readable_trace_counts" in done.stderr  # and the traces of its groups (public)


@pytest.mark.slow
def test_doctor_ok(data_dir: Path) -> None:
    done = kgp("--data-dir", str(data_dir), "doctor", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is True
    checks = {c["check"]: c for c in report["checks"]}
    expected = {"store", "encoder", "shipped model", "order model", "device", "ocr", "versions"}
    assert set(checks) == expected
    assert "kgp-traversal" in checks["shipped model"]["detail"]
    assert "its files match its card" in checks["shipped model"]["detail"]


@pytest.mark.slow
def test_doctor_fails_on_missing_encoder(data_dir: Path, tmp_path: Path) -> None:
    done = kgp("--data-dir", str(data_dir), "doctor", env={"KGP_ENCODER": str(tmp_path / "nope")})
    assert done.returncode == 1
    assert done.stderr.strip().startswith("kgp: error: encoder:")
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {"KGP_STORE": "neo4j", "KGP_NEO4J_URI": "neo4j://127.0.0.1:9"},
            "cannot reach Neo4j at neo4j://127.0.0.1:9",
        ),
        ({"KGP_STORE": "neo4j", "KGP_NEO4J_URI": "ftp://x"}, "invalid Neo4j URI 'ftp://x'"),
        ({"KGP_STORE": "mongo"}, "invalid setting store (KGP_STORE) = 'mongo'"),
    ],
)
def test_errors_are_one_line_without_traceback(
    env: dict[str, str], expected: str, data_dir: Path
) -> None:
    done = kgp("--data-dir", str(data_dir), "stats", env=env)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], done.stderr


@pytest.mark.slow
def test_password_is_not_printed(data_dir: Path) -> None:
    env = {
        "KGP_STORE": "neo4j",
        "KGP_NEO4J_URI": "neo4j://127.0.0.1:9",
        "KGP_NEO4J_PASSWORD": "s3cr3t-pw",
    }
    for args in (("stats",), ("doctor", "--json")):
        done = kgp("--data-dir", str(data_dir), *args, env=env)
        assert "s3cr3t-pw" not in done.stdout + done.stderr


def test_data_dir_that_is_a_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    done = kgp("--data-dir", str(blocker), "stats")
    assert done.returncode == 1
    assert "not writable" in done.stderr and "KGP_DATA_DIR" in done.stderr


@pytest.mark.slow
def test_sync_json_and_partial_exit_code(tmp_path: Path, data_dir: Path) -> None:
    from tests.corpus_files import write_corpus

    folder = write_corpus(tmp_path / "docs", ["rivers.txt", "mountains.md"])
    (folder / "junk.txt").write_bytes(b"\x00\x01\x02")
    done = kgp("--data-dir", str(data_dir), "sync", str(folder), "--json")
    assert done.returncode == 2, done.stderr
    report = json.loads(done.stdout)
    assert sorted(report["added"]) == ["mountains.md", "rivers.txt"]
    assert report["skipped"] == [
        {"path": "junk.txt", "reason": "binary data (NUL bytes), not text; remove it or rename it"}
    ]
    assert report["partial"] is True
    (folder / "junk.txt").unlink()
    again = kgp("--data-dir", str(data_dir), "--quiet", "sync", str(folder))
    assert again.returncode == 0, again.stderr
    assert "added 0, changed 0, removed 0, unchanged 2, skipped 0" in again.stdout

    empty = tmp_path / "unmounted"
    empty.mkdir()
    refused = kgp("--data-dir", str(data_dir), "sync", str(empty), "--json")
    assert refused.returncode == 1
    assert json.loads(refused.stdout) == {
        "refused": True,
        "error": refused.stderr.strip().removeprefix("kgp: error: "),
        "would_remove": ["mountains.md", "rivers.txt"],
        "stored": 2,
    }
    assert len(refused.stderr.splitlines()) == 1 and "--allow-removal" in refused.stderr
    assert (
        json.loads(kgp("--data-dir", str(data_dir), "stats", "--json").stdout)["labels"]["Document"]
        == 2
    ), "nothing was removed"
    forced = kgp("--data-dir", str(data_dir), "sync", str(empty), "--allow-removal", "--json")
    assert forced.returncode == 0, forced.stderr
    assert sorted(json.loads(forced.stdout)["removed"]) == ["mountains.md", "rivers.txt"]


def test_sync_of_a_missing_folder(tmp_path: Path, data_dir: Path) -> None:
    done = kgp("--data-dir", str(data_dir), "sync", str(tmp_path / "nope"))
    assert done.returncode == 1
    assert (
        done.stderr.strip()
        == f"kgp: error: {tmp_path / 'nope'}: not a folder; give the folder to sync"
    )


@pytest.mark.slow
def test_sync_watch_follows_the_folder(tmp_path: Path, data_dir: Path) -> None:
    import queue
    import signal
    import threading

    from tests.corpus_files import TEXTS, write_corpus

    folder = write_corpus(tmp_path / "docs", ["rivers.txt"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGP_")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kgp",
            "--data-dir",
            str(data_dir),
            "sync",
            str(folder),
            "--watch",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # Ctrl-C reaches a foreground command; a runner started in the background of a shell
        # without job control ignores SIGINT, and its children inherit that (Python then installs
        # no handler: the command would never see the SIGINT below)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout is not None and proc.stderr is not None
    errors = proc.stderr.read
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()
    try:
        first = json.loads(lines.get(timeout=120))
        assert first["added"] == ["rivers.txt"]
        (folder / "mountains.md").write_text(TEXTS["mountains.md"])
        second = json.loads(lines.get(timeout=60))
        assert second["added"] == ["mountains.md"]
        (folder / "rivers.txt").unlink()
        third = json.loads(lines.get(timeout=60))
        assert third["removed"] == ["rivers.txt"]
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            pytest.fail(f"kgp sync --watch still running 30 s after SIGINT; stderr:\n{errors()}")
    assert proc.returncode == 130, errors()


@pytest.mark.slow
def test_retrieve_prints_passages_and_paths(tmp_path: Path, data_dir: Path) -> None:
    from tests.test_examples import EXAMPLES

    assert kgp("--data-dir", str(data_dir), "--quiet", "sync", str(EXAMPLES)).returncode == 0
    done = kgp(
        "--data-dir",
        str(data_dir),
        "retrieve",
        "Who manages Alder Creek?",
        "--k",
        "12",
        "--json",
        "--seeder",
        "hybrid",
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result) == {
        "question",
        "passages",
        "seeds",
        "structure",
        "timings",
        "store_calls",
        "trace",
        "steps",
        "notices",
    }
    assert len(result["passages"]) == 12
    assert set(result["passages"][0]) == {
        "id",
        "text",
        "score",
        "document",
        "page",
        "path",
        "hop",
        "kind",
        "step_score",
        "table",
    }
    assert any("Mira Kovac" in p["text"] for p in result["passages"])
    scores = [p["score"] for p in result["passages"]]
    assert scores == sorted(scores, reverse=True), "the score printed is the ranking's"
    human = kgp("--data-dir", str(data_dir), "retrieve", "Who manages Alder Creek?", "--k", "3")
    assert human.returncode == 0 and "stations.md" in human.stdout
    long = runner.invoke(
        app,
        ["--data-dir", str(data_dir), "retrieve", "Who manages Alder Creek? " * 200, "--k", "2"],
    )
    assert long.exit_code == 0
    assert long.stderr.startswith("kgp: warning: the question has 4,999 characters; only its")
    empty = kgp("--data-dir", str(data_dir), "retrieve", " ")
    assert (
        empty.returncode == 1
        and empty.stderr.strip() == "kgp: error: the question is empty; ask something"
    )


def test_a_watched_sync_that_failed_is_one_line_and_watching_goes_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """kgp sync --watch shows a sync the store failed as one warning line on stderr (or one
    JSON object with --json), saying that it watches on."""
    from kgp.cli.sync import _show
    from kgp.errors import StoreError
    from rich.console import Console

    failed = StoreError("FalkorDB rejected a write (no space); nothing of it was kept")
    _show(failed, as_json=True, out=Console())
    assert json.loads(capsys.readouterr().out) == {"failed": True, "error": str(failed)}
    _show(failed, as_json=False, out=Console())
    said = capsys.readouterr().err.strip()
    assert said.startswith(f"kgp: sync failed: {failed}") and "watching on" in said


def test_a_read_command_refuses_a_data_dir_that_does_not_exist(tmp_path: Path) -> None:
    """A mistyped --data-dir is said, not made: the command stops in one line naming it."""
    typo = tmp_path / "kb-typo"
    for command in (
        ("stats",),
        ("retrieve", "Who manages Alder Creek?"),
        ("ask", "Who manages Alder Creek?"),
        ("export", str(tmp_path / "out")),
        ("maintain",),
        ("backup", str(tmp_path / "copy")),
        ("remove", "stations.md"),
    ):
        done = kgp("--data-dir", str(typo), *command)
        assert done.returncode == 1, (command, done.stdout)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and f"data directory {typo} does not exist" in lines[0], command
        assert f"kgp --data-dir {typo} sync FOLDER" in lines[0]
        assert not typo.exists()


def test_no_passages_says_whether_the_graph_is_empty_or_unreadable(tmp_path: Path) -> None:
    from tests.test_examples import EXAMPLES

    data_dir = tmp_path / "kb"
    data_dir.mkdir()
    empty = kgp("--data-dir", str(data_dir), "retrieve", "Who manages Alder Creek?")
    assert empty.returncode == 0, empty.stderr
    assert f"the graph in data directory {data_dir} is empty" in empty.stdout
    assert kgp("--data-dir", str(data_dir), "add", str(EXAMPLES / "stations.md")).returncode == 0
    hidden = kgp("--data-dir", str(data_dir), "--groups", "hr", "retrieve", "Alder Creek?")
    assert hidden.returncode == 0, hidden.stderr
    assert "groups hr may read none of the documents in data directory" in hidden.stdout
    stats = kgp("--data-dir", str(data_dir), "stats")  # (the title wraps the path anywhere)
    assert "".join(f"kgp graph in data directory {data_dir}".split()) in "".join(
        stats.stdout.split()
    )


def test_add_and_remove_documents_by_name(tmp_path: Path) -> None:
    from tests.test_examples import EXAMPLES

    data_dir = tmp_path / "kb"
    files = [str(EXAMPLES / "stations.md"), str(EXAMPLES / "maintenance.md")]
    added = kgp("--data-dir", str(data_dir), "add", *files, "--readable-by", "ops", "--json")
    assert added.returncode == 0, added.stderr
    assert sorted(json.loads(added.stdout)["added"]) == ["maintenance.md", "stations.md"]
    listed = kgp("--data-dir", str(data_dir), "--groups", "*", "stats", "--json")
    assert json.loads(listed.stdout)["groups"] == {"ops": 2}
    again = kgp("--data-dir", str(data_dir), "add", files[0], "--readable-by", "ops")
    assert again.returncode == 0 and "unchanged 1" in again.stdout
    missing = kgp("--data-dir", str(data_dir), "remove", "stations.md", "nothing.md")
    assert missing.returncode == 1
    assert missing.stderr.strip() == (
        f"kgp: error: no document 'nothing.md' in data directory {data_dir}; nothing removed "
        "(an id is the path relative to the synced folder)"
    )
    reader = kgp("--data-dir", str(data_dir), "--groups", "ops", "remove", "stations.md")
    assert reader.returncode == 1 and "changes the graph for every reader" in reader.stderr
    removed = kgp("--data-dir", str(data_dir), "remove", "stations.md")
    assert removed.returncode == 0 and removed.stdout.strip() == "removed 1 document: stations.md"
    left = kgp("--data-dir", str(data_dir), "--groups", "*", "stats", "--json")
    assert json.loads(left.stdout)["groups"] == {"ops": 1}
    nothing = kgp("--data-dir", str(data_dir), "add", str(tmp_path / "no.md"))
    assert nothing.returncode == 1 and "no.md: no such file" in nothing.stderr


def test_unknown_settings_are_refused_with_the_closest_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="unknown setting 'budjet'; did you mean 'budget'"):
        kgp_open(data_dir=tmp_path / "kb", budjet=3)
    assert not (tmp_path / "kb").exists()
    config = tmp_path / "kgp.toml"
    config.write_text('data_dir = "kb"\nscorrer = "tfidf"\n')
    done = kgp("--data-dir", str(tmp_path / "kb"), "stats", env={"KGP_CONFIG": str(config)})
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"kgp: error: unknown setting in {config} 'scorrer'; did you mean 'scorer'?"
    )
