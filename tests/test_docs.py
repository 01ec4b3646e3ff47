"""The documentation site (``docs/``, ``mkdocs.yml``) as part of the suite, the way ``test_typecheck.py`` runs mypy:
`make test` and plain `pytest` both build it with ``--strict`` (a broken link or anchor, a page missing from the nav,
a missing include fails), and check that what the docs name exists and that every setting is documented."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
SETTINGS_PAGES = ("configuration.md", "limits.md")  # the pages with the settings tables


def test_the_site_builds_strictly_without_network(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        capture_output=True,
        text=True,
        cwd=REPO,
        # Material's notice about MkDocs 2.0 is not about this site; proxies pointing nowhere make any fetch fail
        env={
            **os.environ,
            "NO_MKDOCS_2_WARNING": "1",
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "HTTP_PROXY": "http://127.0.0.1:9",
        },
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "benchmarks" / "index.html").is_file()
    html = (tmp_path / "site" / "index.html").read_text()
    assert "fonts.googleapis.com" not in html, "theme.font must stay false: no web fonts from the internet"


def _env_example_variables() -> list[str]:
    names = re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", (REPO / ".env.example").read_text(), re.MULTILINE)
    return sorted(set(names))


@pytest.mark.parametrize("variable", _env_example_variables())
def test_every_setting_of_env_example_is_in_a_settings_table(variable: str) -> None:
    text = "\n".join((DOCS / page).read_text() for page in SETTINGS_PAGES)
    rows = [line for line in text.splitlines() if line.startswith("|") and f"`{variable}`" in line]
    assert rows, f"{variable} is in .env.example but in no table row of docs/{' or docs/'.join(SETTINGS_PAGES)}"


def test_the_env_example_list_is_read() -> None:
    names = _env_example_variables()
    assert "DATABASE_URL" in names and "FAIRWAY_EVICTION_RETENTION_DAYS" in names and len(names) > 40


def _doc_pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def test_every_source_file_the_docs_name_exists() -> None:
    missing = []
    for page in [*_doc_pages(), REPO / "README.md"]:
        for path in re.findall(r"`((?:[a-z_]+/)+[A-Za-z0-9_.-]+\.(?:py|yaml|yml|json|sh|toml))`", page.read_text()):
            if not (REPO / path).exists():
                missing.append(f"{page.relative_to(REPO)}: {path}")
    assert not missing, "the docs name files that do not exist:\n" + "\n".join(missing)


def test_the_readme_is_short_and_links_into_the_docs() -> None:
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 260, "the README is an introduction: the rest belongs in docs/"
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", text)
    assert links, "the README links into the docs"
    broken = [link for link in links if not (REPO / link).is_file()]
    assert not broken, f"README links to missing docs pages: {broken}"
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text):
        assert (REPO / image).is_file(), image
