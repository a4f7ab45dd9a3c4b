"""The settings and CLI references, made from the code: ``docs/settings.md`` from the settings'
fields (their groups, defaults and descriptions, :mod:`kgp.settings`) and ``docs/cli.md`` from
the commands' own help. ``python -m kgp.cli.reference`` writes both; a test
(``tests/unit/test_docs.py``) fails when a file differs from what the code makes."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Any

from kgp.settings import GROUPS, Settings
from pydantic import SecretStr

DOCS = Path(__file__).resolve().parents[2] / "docs"
WIDTH = 100  # the help's width, whatever the terminal's
GROUP_TITLES = {
    "store": "Store",
    "models": "Models",
    "ingest": "Ingest and sync",
    "retrieval": "Retrieval",
    "access": "Access control",
    "serving": "Serving",
}


def settings_markdown() -> str:
    lines = [
        "# Settings",
        "",
        "<!-- made by python -m kgp.cli.reference from kgp.settings: edit the code -->",
        "",
        "One frozen settings object, read once by each command or by `kgp.open()`. Sources, "
        "highest first: keyword arguments (`kgp.open(budget=10)`), `KGP_*` environment "
        "variables, `.env`, and `kgp.toml` (or the file `KGP_CONFIG` names) with the names "
        "below in lower case. A name that is no setting, given to `kgp.open()` or in the "
        "settings file, is refused with the closest one. Passwords and keys are never printed; "
        "a password inside a URL is shown as `***`.",
    ]
    for group in GROUPS:
        lines += [
            "",
            f"## {GROUP_TITLES[group]}",
            "",
            "| variable | default | what |",
            "| --- | --- | --- |",
        ]
        for name, field in Settings.model_fields.items():
            extra = field.json_schema_extra
            if not isinstance(extra, dict) or extra.get("group") != group:
                continue
            default = _shown(field.default) if field.default_factory is None else _factory(name)
            lines.append(f"| `KGP_{name.upper()}` | {default} | {field.description} |")
    return "\n".join(lines) + "\n"


def _shown(value: Any) -> str:
    if value is None or (isinstance(value, SecretStr) and not value.get_secret_value()):
        return "unset"
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, tuple):
        return f"`{','.join(value)}`" if value else "none"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _factory(name: str) -> str:
    if name == "data_dir":
        return "the user's data folder (`~/.local/share/kgp` on Linux)"
    raise ValueError(f"no words for the default of {name}")


def cli_markdown() -> str:
    import typer.main
    from kgp.cli import app

    root = typer.main.get_command(app)
    lines = [
        "# Commands",
        "",
        "<!-- made by python -m kgp.cli.reference from kgp.cli: edit the code -->",
        "",
        "Every command prints one line on stderr when it fails (`kgp: error: ...`) and exits 1.",
        "",
        "```",
        _help(
            root,
            root.context_class(
                root, info_name="kgp", max_content_width=WIDTH, terminal_width=WIDTH
            ),
        ),
        "```",
    ]
    parent = root.context_class(root, info_name="kgp")
    for name, command in _commands(root):
        context = command.context_class(
            command, info_name=name, parent=parent, max_content_width=WIDTH, terminal_width=WIDTH
        )
        lines += ["", f"## kgp {name}", "", "```", _help(command, context), "```"]
    return "\n".join(lines) + "\n"


def _commands(group: Any, prefix: str = "") -> list[tuple[str, Any]]:
    found = []
    for name, command in group.commands.items():
        full = f"{prefix}{name}"
        found.append((full, command))
        if hasattr(command, "commands"):
            found += _commands(command, f"{full} ")
    return found


def _help(command: Any, context: Any) -> str:
    return "\n".join(line.rstrip() for line in command.get_help(context).splitlines())


def main() -> None:
    (DOCS / "settings.md").write_text(settings_markdown(), encoding="utf-8")
    (DOCS / "cli.md").write_text(cli_markdown(), encoding="utf-8")
    sys.stdout.write(f"wrote {DOCS / 'settings.md'} and {DOCS / 'cli.md'}\n")


if __name__ == "__main__":
    main()
