"""What went wrong, in words a user can act on (no Scrapy import): a mistake of theirs
(:class:`ConfigError`), or a download that got no response.

Scrapy's own errors say enough ("Connection was refused by other side", "DNS lookup
failed"), but one that failed inside Twisted's HTTP client arrives as a list of Failure
reprs (``ResponseNeverReceived``): the TLS handshake with a server that speaks plain
HTTP reads ``[<twisted.python.failure.Failure OpenSSL.SSL.Error: [('SSL routines', '',
'wrong version number')]>]``. The first underlying reason is what the user needs.
"""

from __future__ import annotations

__all__ = ["ConfigError", "DeadlineReached", "failure_text"]


class ConfigError(ValueError):
    """A mistake in what the user asked for (an option, a config file, a state store or folder
    not fit for the command): the CLI says it in one line, exit status 2. Any other exception
    is a bug, said as one and shown whole with ``-v``. A ``ValueError`` still, so code that
    catches those keeps working."""


class DeadlineReached(Exception):
    """The request's deadline came before its download could start or end (``check``)."""


#: Words of an OpenSSL error -> what they mean for the user.
_TLS_HINTS = {
    "wrong version number": "TLS handshake failed, the server does not speak HTTPS there: for plain HTTP use http://",
    "certificate verify failed": "TLS handshake failed: the server's certificate is not trusted",
    "unsupported protocol": "TLS handshake failed: the server offers only a TLS version too old to use",
}


def _reasons(error: BaseException) -> list[BaseException]:
    """The exceptions behind *error*: the ``reasons`` (Twisted Failures) of it or its cause."""
    for link in (error, error.__cause__):
        reasons = getattr(link, "reasons", None)
        if isinstance(reasons, list):
            found = [getattr(reason, "value", reason) for reason in reasons]
            return [value for value in found if isinstance(value, BaseException)]
    return []


def failure_text(error: BaseException) -> str:
    """``TypeName: message`` of *error*, or of the first reason behind it, with a hint for
    the TLS failures a wrong scheme or an untrusted certificate cause."""
    shown = next(iter(_reasons(error)), error)
    words = str(shown)
    for sign, hint in _TLS_HINTS.items():
        if sign in words:
            return f"{hint} [{sign}]"
    return f"{type(shown).__name__}: {words}".strip().rstrip(":")
