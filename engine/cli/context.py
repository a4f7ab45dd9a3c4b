"""What every command gets from the global options: the settings to load, how to open the
graph, and whether to trace queries or draw progress."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kgp.cli.output import err
from kgp.client import KnowledgeGraph, QueryEvent, Tracer, summarise
from kgp.client import open as open_graph
from kgp.errors import ConfigurationError
from kgp.settings import Settings, StoreKind, load_settings, redact_url


def data_home(settings: Settings) -> str:
    """Where the graph lives, in words: its data directory, or its Neo4j server."""
    if settings.store is StoreKind.EMBEDDED:
        return f"data directory {settings.data_dir}"
    return f"Neo4j at {redact_url(settings.neo4j_uri)}"


@dataclass
class Context:
    overrides: dict[str, Any] = field(default_factory=dict)
    trace: bool = False
    quiet: bool = False

    def settings(self) -> Settings:
        return load_settings(**self.overrides)

    def open(self, settings: Settings, *, reading: bool = False) -> KnowledgeGraph:
        """The graph of ``settings`` (loaded once by the command), traced with ``--trace``;
        unless ``--quiet``, a long load or index build is reported on stderr. ``reading``: a
        command that only reads refuses a data directory that does not exist (a mistyped
        ``--data-dir``) instead of making an empty one."""
        if reading and settings.store is StoreKind.EMBEDDED and not settings.data_dir.exists():
            raise ConfigurationError(
                f"data directory {settings.data_dir} does not exist; give the one you synced "
                "(--data-dir or KGP_DATA_DIR), or sync into it first: "
                f"kgp --data-dir {settings.data_dir} sync FOLDER"
            )
        waiting = None if self.quiet else self._waiting
        return open_graph(settings=settings, tracer=self.tracer(), on_wait=waiting)

    def _waiting(self, news: str) -> None:
        err.print(f"kgp: {news}", highlight=False, markup=False, soft_wrap=True)

    def say(self, news: str) -> None:
        """One line of news on stderr (``kgp: ...``), unless ``--quiet``."""
        if not self.quiet:
            self._waiting(news)

    def open_with(self, **overrides: Any) -> KnowledgeGraph:
        """A graph of the global options plus ``overrides`` (eval and train build several)."""
        return open_graph(**{**self.overrides, **overrides})

    def tracer(self) -> Tracer | None:
        return self._trace if self.trace else None

    def _trace(self, event: QueryEvent) -> None:
        params = json.dumps(summarise(event.parameters), default=str)
        err.print(
            f"[dim]trace {event.name} {event.seconds * 1000:.1f} ms "
            f"rows={event.rows} {params}[/dim]",
            highlight=False,
            markup=True,
        )
