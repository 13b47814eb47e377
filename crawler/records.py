"""JSON records the tool writes for itself (the state store's page facts, the export spool):
the bulk of the export's time and a part of each page's, so they go through orjson. A value
orjson refuses (a lone surrogate from a broken page, an integer past 64 bits) falls back to the
standard library, which writes it escaped and reads it back: a record is never lost to the
fast path."""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["decode", "encode"]


def encode(value: Any) -> bytes:
    """Compact UTF-8 JSON of *value*."""
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value, separators=(",", ":")).encode()


def decode(data: bytes | str) -> Any:
    """The value of a JSON record; ``ValueError`` when it is not one."""
    try:
        return orjson.loads(data)
    except ValueError:  # what orjson refuses to read too (a lone surrogate's escape), or broken
        return json.loads(data)
