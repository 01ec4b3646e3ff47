"""Read an HTML form as a browser would submit it: the data of its controls as rendered, for the test client.

    data = form_data(response.content.decode(), "queue_form")
    client.post(url, {**data, "weight": "3"})

Only what a browser sends: text-like inputs and hidden ones with their value, checked checkboxes and radio buttons,
the selected options of selects (the first option of a single select when none is marked), textareas' text;
disabled controls, file inputs and buttons are left out (the caller adds the submit button it presses).
"""

from __future__ import annotations

from html.parser import HTMLParser

_NOT_SENT = {"submit", "button", "reset", "image", "file"}


class _FormReader(HTMLParser):
    def __init__(self, form_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.inside = False
        self.found = False
        self.pairs: list[tuple[str, str]] = []
        self._select: tuple[str, bool] | None = None  # (name, multiple)
        self._options: list[tuple[str, bool]] = []  # (value, selected) of the select being read
        self._option: tuple[str | None, bool] | None = None  # the option being read (value, selected)
        self._option_text = ""
        self._textarea: str | None = None
        self._textarea_text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: (v if v is not None else "") for k, v in attrs}
        if tag == "form" and a.get("id") == self.form_id:
            self.inside = self.found = True
            return
        if not self.inside:
            return
        name = a.get("name")
        disabled = "disabled" in a
        if tag == "input" and name and not disabled:
            kind = a.get("type", "text").lower()
            if kind in _NOT_SENT:
                return
            if kind in ("checkbox", "radio"):
                if "checked" in a:
                    self.pairs.append((name, a.get("value", "on")))
                return
            self.pairs.append((name, a.get("value", "")))
        elif tag == "select" and name and not disabled:
            self._select = (name, "multiple" in a)
            self._options = []
        elif tag == "option" and self._select is not None:
            self._close_option()
            self._option = (a.get("value"), "selected" in a)
            self._option_text = ""
        elif tag == "textarea" and name and not disabled:
            self._textarea, self._textarea_text = name, ""

    def _close_option(self) -> None:
        if self._option is not None:
            value, selected = self._option
            self._options.append((value if value is not None else self._option_text.strip(), selected))
            self._option = None

    def handle_data(self, data: str) -> None:
        if self._option is not None:
            self._option_text += data
        if self._textarea is not None:
            self._textarea_text += data

    def handle_endtag(self, tag: str) -> None:
        if not self.inside:
            return
        if tag == "form":
            self.inside = False
        elif tag == "option":
            self._close_option()
        elif tag == "select" and self._select is not None:
            self._close_option()
            name, multiple = self._select
            chosen = [v for v, selected in self._options if selected]
            if not chosen and not multiple and self._options:
                chosen = [self._options[0][0]]
            self.pairs.extend((name, v) for v in chosen)
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            # a browser drops the one newline that follows <textarea> (the parser keeps it)
            text = self._textarea_text[1:] if self._textarea_text.startswith("\n") else self._textarea_text
            self.pairs.append((self._textarea, text.replace("\r\n", "\n")))
            self._textarea = None


def form_pairs(html: str, form_id: str) -> list[tuple[str, str]]:
    """The (name, value) pairs the form with ``id=form_id`` submits as rendered; AssertionError when it is absent."""
    reader = _FormReader(form_id)
    reader.feed(html)
    reader.close()
    assert reader.found, f"no form with id {form_id!r} in the page"
    return reader.pairs


def form_data(html: str, form_id: str) -> dict[str, str | list[str]]:
    """``form_pairs`` as the test client's data: a name given several times becomes a list."""
    out: dict[str, str | list[str]] = {}
    for name, value in form_pairs(html, form_id):
        if name in out:
            prev = out[name]
            out[name] = [*prev, value] if isinstance(prev, list) else [prev, value]
        else:
            out[name] = value
    return out
