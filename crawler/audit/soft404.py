"""Does a page title say "not found"? Whole status phrases only (pure).

A soft 404 is a page answering 200 that says it does not exist. Its title
says so with a stock phrase ("404 Not Found", "Page not found - Example",
"Seite nicht gefunden"), as the whole title or as one part of it between
the separators sites put around their name. A title that merely mentions
404 ("Canonical pointing at a 404 page", "Top 404 errors explained") is a
page about 404s, not one: never a finding a release manager would have to
dismiss by hand.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["NOT_FOUND_PHRASES", "says_not_found"]

#: Stock not-found phrases, by language, lower case, ``|`` between them; "404" and
#: an "error 404" form stand alone too.
NOT_FOUND_PHRASES: dict[str, str] = {
    "en": "not found|page not found|404 not found|404 page not found|404 error|error 404|file not found"
    "|page does not exist|page doesn't exist|this page does not exist|page no longer exists|page cannot be found"
    "|page can't be found|the page cannot be found|the page you requested could not be found",
    "de": "seite nicht gefunden|fehler 404|nicht gefunden|seite existiert nicht",
    "fr": "page introuvable|page non trouvée|erreur 404|page inexistante",
    "es": "página no encontrada|pagina no encontrada|error 404|no encontrado",
    "it": "pagina non trovata|errore 404|non trovato",
    "nl": "pagina niet gevonden|fout 404|niet gevonden",
    "pt": "página não encontrada|pagina nao encontrada|erro 404|não encontrado",
    "pl": "nie znaleziono strony|strona nie istnieje|błąd 404|nie znaleziono",
    "sv": "sidan hittades inte|sidan kunde inte hittas|fel 404",
    "da": "siden blev ikke fundet|siden findes ikke|fejl 404",
    "no": "siden ble ikke funnet|finner ikke siden",
    "fi": "sivua ei löytynyt|virhe 404",
    "cs": "stránka nenalezena|chyba 404",
    "tr": "sayfa bulunamad\u0131|hata 404",
    "ru": "страница не найдена|ошибка 404",
    "ja": "ページが見つかりません|お探しのページは見つかりませんでした",
    "zh": "页面未找到|找不到页面|页面不存在",
}
_PHRASES = frozenset(phrase for phrases in NOT_FOUND_PHRASES.values() for phrase in phrases.split("|")) | {"404"}
#: Where a title's parts meet: "Page not found | Example", "404 - Example" (or an en or em dash).
_SEPARATOR = re.compile(r"\s+[-\u2013\u2014|\u00b7\u2022\u00bb\u00ab:/]+\s+|\s*[|\u00b7\u2022\u00bb\u00ab]\s*")
#: What a stock phrase may be wrapped in: "Oops! Page not found.", "(404)", "Error: 404".
_WRAPPING = re.compile(r"^(?:(?:oops|whoops|sorry|uh oh|error|ups|désolé)\b[\s,!.:]*)+", re.IGNORECASE)
_NOT_WORDS = re.compile(r"[^\w\s']+")


def _plain(part: str) -> str:
    text = unicodedata.normalize("NFKC", part).casefold().replace("\u2019", "'")
    text = " ".join(_NOT_WORDS.sub(" ", text).split())
    return _WRAPPING.sub("", text).strip()


def says_not_found(title: str) -> bool:
    """Whether the whole *title*, or one of its parts, is a not-found phrase."""
    parts = [title, *_SEPARATOR.split(title)]
    return any(_plain(part) in _PHRASES for part in parts if part)
