"""kgp: Knowledge Graph Prompting over a graph database.

>>> import kgp
>>> with kgp.open(data_dir="/tmp/kb") as kg:   # doctest: +SKIP
...     print(kg.stats())
"""

from __future__ import annotations

from kgp.client import KnowledgeGraph, open
from kgp.errors import (
    ConfigurationError,
    DocumentError,
    KgpError,
    ModelMissingError,
    StoreError,
    StoreUnavailableError,
)
from kgp.settings import Settings, load_settings

__version__ = "0.1.0"

__all__ = [
    "ConfigurationError",
    "DocumentError",
    "KgpError",
    "KnowledgeGraph",
    "ModelMissingError",
    "Settings",
    "StoreError",
    "StoreUnavailableError",
    "__version__",
    "load_settings",
    "open",
]
