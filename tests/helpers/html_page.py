"""Reading the HTML report's embedded data back in Python, as the page's script does in the browser:
its <script type="application/json" id="evalrun-data"> element, the index and every chunk of cases
decoded from base64 and gzip (runner/report/html_data.py)."""
from __future__ import annotations

import base64
import gzip
import html.parser
import json
from typing import Any


class _Scripts(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[dict, str]] = []
        self._inside = False

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self._inside = True
            self.scripts.append((dict(attrs), ""))

    def handle_data(self, data):
        if self._inside:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag):
        if tag == "script":
            self._inside = False


def scripts(page: str) -> list[tuple[dict, str]]:
    """(attributes, text) of every <script> element of the page, as an HTML parser sees them."""
    parser = _Scripts()
    parser.feed(page)
    return parser.scripts


def unpack(encoded: str) -> Any:
    return json.loads(gzip.decompress(base64.b64decode(encoded, validate=True)).decode("utf-8"))


def page_data(page: str) -> dict[str, Any]:
    """The page's data: {"cases": every case whole, "index": the list's rows, "starts", "regressed", "fixed"}."""
    found = [text for attrs, text in scripts(page) if attrs.get("id") == "evalrun-data"]
    assert len(found) == 1, f"{len(found)} evalrun-data elements"
    raw = json.loads(found[0])
    assert raw["encoding"] == "gzip+base64"
    cases = [case for chunk in raw["chunks"] for case in unpack(chunk)]
    starts, n = [], 0
    for chunk in raw["chunks"]:
        starts.append(n)
        n += len(unpack(chunk))
    assert raw["starts"] == starts and raw["total"] == len(cases)
    return {"cases": cases, "index": unpack(raw["index"]), "starts": raw["starts"],
            "regressed": raw["regressed"], "fixed": raw["fixed"]}
