"""The request of a page, as the disk frontier stores it.

Every queued request is written to disk as :meth:`Request.to_dict` makes it, and Scrapy
finds the names of its callback and errback by listing every method of the spider
(``inspect.getmembers``): a third of a millisecond a request, more than pickling it.
A bound method of the spider carries its name, so :class:`PageRequest` checks that name
in one lookup and gives the same dict; anything else takes Scrapy's own way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import Request

if TYPE_CHECKING:
    from scrapy import Spider

__all__ = ["PageRequest"]

_UNKNOWN = object()


def _name(spider: Spider, method: Any) -> str | object:
    """*method*'s name on *spider* when it is that spider's method of that name, else unknown."""
    name = getattr(method, "__name__", None)
    if name is None or getattr(method, "__self__", None) is not spider:
        return _UNKNOWN
    found = getattr(spider, name, None)
    return name if getattr(found, "__func__", None) is getattr(method, "__func__", _UNKNOWN) else _UNKNOWN


class PageRequest(Request):
    def to_dict(self, *, spider: Spider | None = None) -> dict[str, Any]:
        names: dict[str, object] = {"callback": self.callback, "errback": self.errback}
        for key, method in names.items():
            if callable(method):
                names[key] = _name(spider, method) if spider is not None else _UNKNOWN
        if any(name is _UNKNOWN for name in names.values()):
            return super().to_dict(spider=spider)
        data: dict[str, Any] = {"url": self.url, **names, "headers": dict(self.headers)}
        for attribute in self.attributes:
            data.setdefault(attribute, getattr(self, attribute))
        data["_class"] = f"{type(self).__module__}.{type(self).__qualname__}"
        return data
