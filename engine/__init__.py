"""kgp: Knowledge Graph Prompting over a graph database.

>>> import kgp
>>> with kgp.open(data_dir="/tmp/kb") as kg:   # doctest: +SKIP
...     print(kg.stats())
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

# Intel MKL's strict reproducibility: each row of a matrix product is summed in one order
# whatever the number of rows, so a text gets the same vector bit for bit in any batch (on
# AVX-512 machines it did not without it: kgp.ingest.embedding). MKL reads this at its first
# call, so it is set before anything imports torch (kgp.determinism.strict_blas checks it).
os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")
# cuBLAS's fixed workspace, which torch's repeatable kernels need on a GPU (training:
# kgp.determinism.repeatable_kernels); read at cuBLAS's first use in the process
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

from kgp.api import AsyncGraph, Graph
from kgp.errors import (
    ConfigurationError,
    DocumentError,
    KgpError,
    ModelMissingError,
    RemovalRefusedError,
    StoreError,
    StoreUnavailableError,
)
from kgp.settings import Settings, load_settings

if TYPE_CHECKING:
    from kgp.client import KnowledgeGraph
    from kgp.remote import AsyncRemoteGraph, RemoteGraph


def open(**overrides: Any) -> KnowledgeGraph:
    """Open the knowledge graph the settings describe (overrides are settings fields, plus
    ``settings=``, ``tracer=`` and ``loaded_encoder=``); use it as a context manager. See
    :func:`kgp.client.open`."""
    from kgp.client import open as open_graph

    return open_graph(**overrides)


def connect(url: str, *, api_key: str | None = None) -> RemoteGraph:
    """A graph served by ``kgp serve`` at ``url``, with the methods, signatures and result
    types of :func:`open`'s graph (:class:`kgp.api.Graph`)."""
    from kgp.remote import RemoteGraph

    return RemoteGraph(url, api_key=api_key)


def connect_async(url: str, *, api_key: str | None = None) -> AsyncRemoteGraph:
    """:func:`connect` with ``await``: ``async with kgp.connect_async(url) as kg: ...``."""
    from kgp.remote import AsyncRemoteGraph

    return AsyncRemoteGraph(url, api_key=api_key)


def __getattr__(name: str) -> Any:
    # the client pulls in more than ``import kgp`` needs: loaded when it is first used
    if name == "KnowledgeGraph":
        from kgp.client import KnowledgeGraph

        return KnowledgeGraph
    raise AttributeError(f"module 'kgp' has no attribute {name!r}")


__version__ = "0.1.0"

__all__ = [
    "AsyncGraph",
    "ConfigurationError",
    "DocumentError",
    "Graph",
    "KgpError",
    "KnowledgeGraph",
    "ModelMissingError",
    "RemovalRefusedError",
    "Settings",
    "StoreError",
    "StoreUnavailableError",
    "__version__",
    "connect",
    "connect_async",
    "load_settings",
    "open",
]
