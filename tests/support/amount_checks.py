"""What people must never read (issue 30, item 1): a sentinel, a bare base-unit number, the text "base units", a
"(s)" plural, a milli-GPU, or an approximation written as a Kubernetes quantity (``≈1400.195Gi``). The crawl tests of
the pages (``tests/frontend/test_crawl_amounts.py``) and of the command line (``tests/cli/test_crawl_amounts.py``)
run every text they read through :func:`problems`."""

from __future__ import annotations

import re
from html.parser import HTMLParser

CHECKS: dict[str, re.Pattern[str]] = {
    # 10**15 and above: an engine's sentinel (2**62, 2**63-1, 2**120) or an amount no person can read
    "sentinel": re.compile(r"(?<![\w.])\d{16,}(?![\d])"),
    # ten digits or more of one number: bytes (1288490188800), millicores; a person reads 1200 GiB
    "bare base units": re.compile(r"(?<![\w.#/:-])\d{10,}(?![\d])"),
    "the words base units": re.compile(r"base[ -]units?", re.I),
    "a (s) plural": re.compile(r"\w\(s\)|\w\(es\)"),
    # 47976m GPUs, nvidia.com/gpu=500m, GPUs: 1500m
    "a milli-GPU": re.compile(r"(?i)\b\d+m\s*(?:[\w.]+/)?gpus?\b|gpus?\b[^\n\d]{0,12}\b\d+m\b"),
    # ≈1400.195Gi: an approximation that reads like a quantity (people read ≈1400.195 GiB)
    "an approximate quantity": re.compile(r"\u2248\s?-?\d+\.\d+\s?[KMGTPE]i(?!B)\b"),
}


def problems(text: str, where: str) -> list[str]:
    """One line per thing in ``text`` people must not read, each with ``where`` and what was found around it."""
    out = []
    for name, pattern in CHECKS.items():
        for found in pattern.finditer(text):
            start, end = max(0, found.start() - 40), found.end() + 40
            out.append(f"{where}: {name}: {found.group(0)!r} in {text[start:end]!r}")
    return out


class _Reader(HTMLParser):
    """The text a person reads on a page (not scripts or styles) with the words of the attributes they see (title,
    placeholder, aria-label, the values of inputs), and the targets of its links."""

    SHOWN_ATTRIBUTES = ("title", "placeholder", "aria-label", "value", "alt")

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.links: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag in ("script", "style", "template"):
            self._hidden += 1
            return
        if tag == "a" and a.get("href") and "download" not in a:
            self.links.append(a["href"])
        if tag == "input" and a.get("type") == "hidden":
            return
        self.parts.extend(a[k] for k in self.SHOWN_ATTRIBUTES if a.get(k))

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "template") and self._hidden:
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def read_page(html: str) -> tuple[str, list[str]]:
    """(the text people read on ``html``, the hrefs of its links)."""
    reader = _Reader()
    reader.feed(html)
    reader.close()
    return re.sub(r"\s+", " ", " ".join(reader.parts)), reader.links
