"""One registry per pluggable kind (kgp.names): settings validation, CLI help, ``kgp eval`` and
the retriever all read it, so a registered name is usable everywhere and an unknown one is
refused everywhere with the same list."""

from __future__ import annotations

import pytest
from kgp.baselines import RETRIEVERS, known
from kgp.cli import app
from kgp.errors import ConfigurationError
from kgp.names import METHODS, ORDERS, SCORERS, SEEDERS, Entry, Registry, listing
from kgp.settings import load_settings
from typer.testing import CliRunner


def test_every_entry_loads_its_implementation() -> None:
    for registry in (SCORERS, SEEDERS, ORDERS, METHODS):
        for name in registry:
            assert callable(registry.load(name)), (registry.kind, name)


def test_the_help_lists_every_registered_name() -> None:
    shown = " ".join(CliRunner().invoke(app, ["retrieve", "--help"]).output.split())
    for label, registry in (("scorer", SCORERS), ("Seeder", SEEDERS), ("", METHODS)):
        assert listing(registry) in shown, (label, listing(registry))


def test_settings_and_eval_accept_exactly_the_registered_names() -> None:
    for name in SCORERS:
        assert load_settings(scorer=name).scorer == name
        assert f"kgp-{name}" in RETRIEVERS
    for name in SEEDERS:
        assert known(f"kgp-tfidf:{name}")
    for name in ORDERS:
        assert known(f"kgp-tfidf:hybrid:{name}")
    with pytest.raises(ConfigurationError, match=listing(SCORERS)):
        load_settings(scorer="oracle")
    assert not known("kgp-oracle") and not known("kgp-tfidf:nowhere")


def test_an_unknown_name_is_refused_with_the_choices() -> None:
    with pytest.raises(ConfigurationError, match="unknown scorer 'oracle'; choose one of tfidf"):
        SCORERS.load("oracle")


def test_a_new_entry_is_one_line() -> None:
    registry = Registry("order", [Entry("visit", "as visited", "kgp.agents.orderings:by_visit")])
    registry.entries["reverse"] = Entry("reverse", "reversed", "builtins:reversed")
    assert list(registry) == ["visit", "reverse"] and registry.load("reverse") is reversed
