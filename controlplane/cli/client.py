"""The REST client of the ``fairway`` command: token auth, JSON in and out, and the API's errors turned into lines
that name the object (``queue "foo" not found``) and the field (``queue "bad": capability.cpu: …``)."""

from __future__ import annotations

from typing import Any

EXIT_OK, EXIT_API_ERROR, EXIT_USAGE = 0, 1, 2


class ApiError(Exception):
    """An answer of the API that is an error, or no answer; ``lines`` are printed after ``error: ``."""

    def __init__(self, status: int, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.status = status
        self.lines = lines


class UsageError(Exception):
    """A command line that cannot be run (exit 2): a missing name, a malformed value."""


class Client:
    def __init__(self, server: str, token: str | None) -> None:
        import requests

        self.server = server.rstrip("/")
        self.session = requests.Session()
        self.session.headers["Accept"] = "application/json"
        if token:
            self.session.headers["Authorization"] = f"Token {token}"

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        params: dict[str, str] | None = None,
        *,
        obj: str | None = None,
    ) -> Any:
        """One request. ``obj`` names what it is about (``queue "foo"``): a 404 reads ``queue "foo" not found``
        and every other error line starts with it."""
        import requests

        url = f"{self.server}/api/v1/{path.lstrip('/')}"
        try:
            resp = self.session.request(method, url, json=body, params=params, timeout=60)
        except requests.RequestException as exc:
            raise ApiError(0, [f"cannot reach {self.server}: {exc.__class__.__name__}: {exc}"]) from exc
        if resp.status_code >= 400:
            raise ApiError(resp.status_code, error_lines(resp, obj))
        if resp.status_code == 204 or not resp.content:
            return None
        return resp.json()

    def list_all(self, path: str, params: dict[str, str] | None = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        query = {"limit": "1000", "offset": "0", **(params or {})}
        while True:
            page = self.call("GET", path, params=query)
            if isinstance(page, list):
                return page
            out.extend(page["results"])
            if not page.get("next"):
                return out
            query["offset"] = str(int(query["offset"]) + int(query["limit"]))


def error_lines(resp: Any, obj: str | None) -> list[str]:
    prefix = f"{obj}: " if obj else ""
    if resp.status_code == 404 and obj:
        return [f"{obj} not found"]
    if resp.status_code == 401:
        return ["authentication credentials were not provided or are not valid (--token or FAIRWAY_TOKEN)"]
    try:
        body = resp.json()
    except ValueError:
        return [f"{prefix}HTTP {resp.status_code}: {resp.text[:200]}"]
    errors = body.get("errors") if isinstance(body, dict) else None
    if not errors:
        return [f"{prefix}HTTP {resp.status_code}: {body}"]
    return [
        f"{prefix}{e['attr']}: {e['detail']}" if e.get("attr") else f"{prefix}{_sentence(str(e.get('detail')))}"
        for e in errors
    ]


def _sentence(text: str) -> str:
    """``Not found.`` -> ``not found``: a message continues the line, it does not start one."""
    text = text.rstrip(".")
    return text[:1].lower() + text[1:] if text[:1].isupper() and not text[1:2].isupper() else text
