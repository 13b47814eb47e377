"""The JSON records the tool keeps for itself: what orjson refuses is still written."""

from __future__ import annotations

import pytest

from crawler.records import decode, encode


def test_a_record_round_trips_compact() -> None:
    value = {"images": ["https://e.com/ä.jpg"], "alternates": [("de", "https://e.com/de/")], "news": None}
    assert (
        encode(value)
        == b'{"images":["https://e.com/\xc3\xa4.jpg"],"alternates":[["de","https://e.com/de/"]],"news":null}'
    )
    assert decode(encode(value)) == {**value, "alternates": [["de", "https://e.com/de/"]]}


def test_what_orjson_refuses_falls_back_to_the_standard_library() -> None:
    value = {"title": "broken \udcff page", "big": 2**70}  # a lone surrogate, an integer past 64 bits
    assert decode(encode(value)) == value


def test_a_broken_record_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        decode(b'{"cut": ')
