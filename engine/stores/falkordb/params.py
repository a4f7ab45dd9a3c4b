"""FalkorDB's wire: a query's parameters as the text of its ``CYPHER name=value`` header (the
protocol has no other way to send them), and result values as plain Python."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np
from falkordb.helpers import quote_string
from kgp.errors import StoreError


def cypher_value(value: Any) -> str:
    """A parameter value as the text of FalkorDB's ``CYPHER name=value`` header (the wire has
    no other way to send parameters). The client's own encoder handles floats one call each,
    which is slow for vectors; a list of floats that are all float32 values (every
    embedding) is written with 9 significant digits, from which ``vecf32`` gives back exactly
    the same float32 values (every vector parameter is read through ``vecf32``)."""
    if isinstance(value, str):
        if "\x00" in value:  # the server reads the query text up to a NUL: refused whole
            raise StoreError(
                "a value holds a NUL character, which FalkorDB's query text cannot carry; remove it"
            )
        return str(quote_string(value))
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return repr(float(value))
    if isinstance(value, list | tuple):
        if _float32_values(value):
            return "[" + _nine_digits(len(value)) % tuple(value) + "]"
        return "[" + ",".join(map(cypher_value, value)) + "]"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{_key(k)}:{cypher_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot send a {type(value).__name__} to FalkorDB as a parameter")


NINE_DIGITS = "%.9g"  # enough for any float32 to parse back exactly


@lru_cache(maxsize=8)
def _nine_digits(count: int) -> str:
    """One format for a whole vector of ``count`` floats: a single ``%`` call formats a vector
    faster than a call for each float."""
    return ",".join([NINE_DIGITS] * count)


def _float32_values(value: list[Any] | tuple[Any, ...]) -> bool:
    return (
        len(value) >= 16
        and all(type(x) is float for x in value)
        and np.asarray(value, dtype=np.float32).astype(np.float64).tolist() == list(value)
    )


def _key(key: object) -> str:
    text = str(key)
    if not text or "`" in text:
        raise ValueError(f"{text!r} cannot name a FalkorDB parameter or map key")
    return f"`{text}`"


def params_header(parameters: Mapping[str, Any]) -> str:
    if not parameters:
        return ""
    return "CYPHER " + " ".join(f"{_key(k)}={cypher_value(v)}" for k, v in parameters.items()) + " "


_SCALARS = frozenset({float, int, str, bool, type(None)})


def plain(value: Any) -> Any:
    """A value of a result row as plain Python (lists and dicts all the way down). A list of
    scalars, every vector among them, is kept as the client built it: walking an embedding's
    floats one call each would cost more than the client's parse of it."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list and all(type(v) in _SCALARS for v in value):
        return value
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value
