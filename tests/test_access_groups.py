"""Access groups on documents (the first part of access control): where they come from (access
files, kg.add, corpus entries, KGP_DEFAULT_GROUPS), that a change of groups alone rewrites no
passage and embeds nothing, that a bad access file stops the sync before anything is written,
and that the graph equals a clean sync under the same rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import kgp
import pytest
from kgp.access import check_groups
from kgp.errors import ConfigurationError
from kgp.ingest.access import ACCESS_FILE, AccessRules
from kgp.ingest.embedding import Encoder


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


DOCS = {
    "handbook.md": "# Handbook\n\nEvery station keeps a logbook of its pump hours.\n",
    "hr/salaries.md": "# Salaries\n\nThe manager of Alder Creek earns more than the others.\n",
    "hr/reviews/2024.md": "# Reviews\n\nMira Kovac was reviewed in March.\n",
    "board/minutes.txt": "The board approved the Cedar Hollow pump replacement.\n",
}


def test_group_names_are_checked() -> None:
    assert check_groups(["staff", " hr ", "staff"], "x") == ("hr", "staff")
    assert check_groups("hr,board", "x", text=True) == ("board", "hr")
    for bad in (["a b"], ["*"], [""], [], ["x,y"], [3], "hr", {"hr": 1}):
        with pytest.raises(ConfigurationError, match=r"^where: "):
            check_groups(bad, "where")


def test_the_nearest_access_file_decides_and_its_first_matching_pattern(tmp_path: Path) -> None:
    root = write(tmp_path / "docs", DOCS)
    (root / ACCESS_FILE).write_text('[groups]\n"board/*" = ["board"]\n"*.md" = ["staff"]\n')
    (root / "hr" / ACCESS_FILE).write_text(
        '[groups]\n"reviews/*" = ["hr", "managers"]\n"*" = ["hr"]\n'
    )
    rules = AccessRules(root, ("public",))
    assert rules.groups("handbook.md") == ("staff",)
    assert rules.groups("board/minutes.txt") == ("board",)
    assert rules.groups("hr/salaries.md") == ("hr",)
    assert rules.groups("hr/reviews/2024.md") == ("hr", "managers")
    assert rules.groups("notes.txt") == ("public",), "no pattern matches: the default"
    assert AccessRules(tmp_path / "elsewhere", ("public",)).groups("a.md") == ("public",)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('[groups\n"*" = ["hr"]', "not valid TOML"),
        ('[groups]\n"*" = ["h r"]', "'h r' is not a group name"),
        ('[groups]\n"*" = []', "give at least one group"),
        ('[groups]\n"*" = "hr"\n[extra]\nx = 1', "unknown key 'extra'"),
        ('groups = ["hr"]', "must be a table"),
    ],
)
def test_a_bad_access_file_stops_the_sync_before_anything_is_written(
    tmp_path: Path, encoder: Encoder, text: str, error: str
) -> None:
    root = write(tmp_path / "docs", DOCS)
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder, groups="*") as kg:
        kg.sync(root)
        before = kg.store.upkeep.dump()
        (root / "hr" / ACCESS_FILE).write_text(text)
        (root / "handbook.md").write_text("# Handbook\n\nChanged text, not written either.\n")
        with pytest.raises(ConfigurationError, match=error) as raised:
            kg.sync(root)
        message = str(raised.value)
        assert "\n" not in message and str(root / "hr" / ACCESS_FILE) in message
        assert kg.store.upkeep.dump() == before


def groups_of(kg: kgp.KnowledgeGraph) -> dict[str, Any]:
    return {d.id: d.groups for d in kg.store.list_documents()}


def test_changing_only_the_groups_rewrites_no_passage_and_embeds_nothing(
    tmp_path: Path, encoder: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write(tmp_path / "docs", DOCS)
    (root / ACCESS_FILE).write_text('[groups]\n"hr/*" = ["hr"]\n')
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder, groups="*") as kg:
        kg.sync(root)
        assert groups_of(kg) == {
            "board/minutes.txt": ("public",),
            "handbook.md": ("public",),
            "hr/reviews/2024.md": ("hr",),
            "hr/salaries.md": ("hr",),
        }
        passages = [n for n in kg.store.upkeep.dump()[0] if n["label"] == "Passage"]
        (root / ACCESS_FILE).write_text(
            '[groups]\n"hr/*" = ["hr", "managers"]\n"board/*" = ["board"]\n'
        )
        calls: list[int] = []
        encode = encoder.encode
        monkeypatch.setattr(encoder, "encode", lambda texts: calls.append(1) or encode(texts))
        report = kg.sync(root)
        assert sorted(report.regrouped) == [
            "board/minutes.txt",
            "hr/reviews/2024.md",
            "hr/salaries.md",
        ]
        assert report.unchanged == 1 and not (report.added or report.changed) and report.wrote
        assert not calls, "nothing embedded"
        assert [n for n in kg.store.upkeep.dump()[0] if n["label"] == "Passage"] == passages
        assert groups_of(kg)["hr/salaries.md"] == ("hr", "managers")
        assert groups_of(kg)["board/minutes.txt"] == ("board",)
        regrouped = kg.store.upkeep.dump()
        assert not kg.sync(root).wrote, "a second sync has nothing to do"
    with kgp.open(data_dir=tmp_path / "clean", loaded_encoder=encoder, groups="*") as clean:
        clean.sync(root)
        assert without_times(clean.store.upkeep.dump()) == without_times(regrouped)


def without_times(dump: Any) -> Any:
    nodes, rels = dump
    return [
        {**n, "props": {k: v for k, v in n["props"].items() if k != "ingested_at"}} for n in nodes
    ], rels


def test_groups_from_add_the_default_setting_and_corpus_entries(
    tmp_path: Path, encoder: Encoder
) -> None:
    root = write(tmp_path / "docs", DOCS)
    with kgp.open(
        data_dir=tmp_path / "kb", loaded_encoder=encoder, default_groups=("staff",), groups="*"
    ) as kg:
        kg.add(root / "handbook.md")
        assert groups_of(kg) == {"handbook.md": ("staff",)}
        report = kg.add(root / "handbook.md", groups=["hr", "staff"])
        assert report.regrouped == ["handbook.md"] and groups_of(kg)["handbook.md"] == (
            "hr",
            "staff",
        )
        with pytest.raises(ConfigurationError, match="'a b' is not a group name"):
            kg.add(root / "handbook.md", groups=["a b"])

        corpus = tmp_path / "corpus.json"
        corpus.write_text(
            json.dumps(
                [
                    {
                        "title": "Alder Creek",
                        "text": "Alder Creek is a station.",
                        "groups": ["ops"],
                    },
                    {"title": "Birchfield", "text": "Birchfield is a station."},
                    {"title": "Alder Creek", "text": "Alder Creek is a station.", "groups": ["hr"]},
                ]
            )
        )
        kg.sync_corpus(corpus)
        found = groups_of(kg)
        assert [found[f"corpus/{n}"] for n in range(3)] == [("ops",), ("staff",), ("hr",)], (
            "the same text under other groups is another document"
        )
        corpus.write_text(json.dumps([{"title": "X", "text": "x", "groups": ["ops", " *"]}]))
        with pytest.raises(ConfigurationError, match=r"corpus\.json: entry 0: '\*'"):
            kg.sync_corpus(corpus)
        assert [found[f"corpus/{n}"] for n in range(3)] == [
            groups_of(kg)[f"corpus/{n}"] for n in range(3)
        ], "nothing changed"


@pytest.mark.slow
def test_cli_sync_reports_regrouped_documents_and_a_bad_access_file(tmp_path: Path) -> None:
    from tests.test_cli import kgp as kgp_cli

    root = write(
        tmp_path / "docs", {"a.md": DOCS["handbook.md"], "hr/b.md": DOCS["hr/salaries.md"]}
    )
    data = str(tmp_path / "kb")
    env = {"KGP_ENCODER": "all-MiniLM-L6-v2", "KGP_DEFAULT_GROUPS": "staff"}
    assert kgp_cli("--data-dir", data, "sync", str(root), env=env).returncode == 0
    (root / "hr" / ACCESS_FILE).write_text('[groups]\n"*" = ["hr"]\n')
    done = kgp_cli("--data-dir", data, "sync", str(root), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("added 0, changed 0, removed 0, regrouped 1, unchanged 1,")
    (root / "hr" / ACCESS_FILE).write_text('[groups]\n"*" = "hr"\n')
    bad = kgp_cli("--data-dir", data, "sync", str(root), env=env)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert bad.stderr.strip() == (
        f"kgp: error: {root / 'hr' / ACCESS_FILE}: '*': groups must be a list of names, not 'hr'"
    )

    # the caller: --groups, KGP_GROUPS, the default groups, and * for everything
    def documents(*options: str, **extra: str) -> Any:
        done = kgp_cli(
            "--data-dir",
            data,
            *options,
            "retrieve",
            "who earns more?",
            "--json",
            env={**env, **extra},
        )
        assert done.returncode == 0, done.stderr
        return sorted({p["document"]["id"] for p in json.loads(done.stdout)["passages"]})

    assert documents() == ["a.md"], "unset: the default groups (staff)"
    assert documents("--groups", "hr") == ["hr/b.md"]
    assert documents(KGP_GROUPS="hr,staff") == ["a.md", "hr/b.md"]
    assert documents("--groups", "*") == ["a.md", "hr/b.md"]
    assert documents("--groups", "board") == []
    counted = kgp_cli("--data-dir", data, "--groups", "hr", "stats", "--json", env=env)
    assert json.loads(counted.stdout)["labels"]["Document"] == 1
    assert json.loads(counted.stdout)["groups"] == {"hr": 1}
    for value, error in (("*,hr", "give it alone"), ("h r", "'h r' is not a group name")):
        bad = kgp_cli("--data-dir", data, "--groups", value, "stats", env=env)
        assert bad.returncode != 0 and "Traceback" not in bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1 and error in bad.stderr


def test_a_graph_from_before_access_groups_is_readable_as_soon_as_it_opens(
    tmp_path: Path, encoder: Encoder
) -> None:
    """Migration runs when the graph opens, not at its next sync: a graph only ever read (kgp
    eval's cached graphs, say) gives its documents the default groups before the first query,
    so a caller in them sees what it saw before."""
    root = write(tmp_path / "docs", {"handbook.md": DOCS["handbook.md"]})
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder, groups="*") as kg:
        kg.sync(root)
        kg.store._execute("MATCH (d:Document) REMOVE d.groups", {}, write=True)
        kg.store.run("set_graph_schema", {"schema": 2}, write=True)
    with kgp.open(data_dir=tmp_path / "kb", loaded_encoder=encoder, default_groups="staff") as kg:
        assert [(d.id, d.groups) for d in kg.documents()] == [("handbook.md", ("staff",))]
        assert kg.retrieve("Who keeps a logbook of pump hours?", 3).passages
