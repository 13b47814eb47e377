"""Log lines for people (text) or log systems (JSON, one object per line).

A JSON line has ``time``, ``level``, ``logger`` and ``message``, plus the
structured fields a record carries (``url``, ``reason``, ``status``, ``run``,
``event`` and the counts of progress and summary events). Known secrets are
masked in every line, whatever the format.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

__all__ = ["FIELDS", "JsonFormatter", "SecretsFilter", "json_event"]

#: Structured fields copied from a log record into its JSON line.
FIELDS = ("event", "url", "reason", "status", "run", "detail", "code", "counts", "exit")
MASK = "***"


def json_event(level: str, logger: str, message: str, **fields: Any) -> str:
    """One JSON log line (no newline)."""
    line = {"time": datetime.now(UTC).isoformat(timespec="milliseconds"), "level": level, "logger": logger}
    line["message"] = message
    line.update({name: value for name, value in fields.items() if value is not None})
    return json.dumps(line, ensure_ascii=False, default=str)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        fields = {name: getattr(record, name) for name in FIELDS if hasattr(record, name)}
        if record.exc_info:
            fields["error"] = self.formatException(record.exc_info)
        return json_event(record.levelname, record.name, record.getMessage(), **fields)


class SecretsFilter(logging.Filter):
    """Masks the given secrets in a record's message and arguments."""

    def __init__(self, secrets: Iterable[str]):
        super().__init__()
        self.secrets = tuple(secret for secret in secrets if len(secret) >= 4)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        if any(secret in message for secret in self.secrets):
            for secret in self.secrets:
                message = message.replace(secret, MASK)
            record.msg, record.args = message, None
        return True
