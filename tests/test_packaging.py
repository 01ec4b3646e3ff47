"""The artifact as shipped: the wheel holds every package of the product, installs outside the checkout and
serves from there; the image copies what the wheel is built from and runs as a non-root user.

The wheel is installed without its dependencies into a fresh virtualenv in a temporary folder; the dependencies
come from the project's own virtualenv through a path entry (its site-packages, whose `.pth` files, among them the
editable install's finder, are not processed from there), so nothing is downloaded and nothing of the checkout is
importable: every command runs with the temporary folder as its working directory.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOT_SHIPPED = {"tests", "bench"}


def product_packages() -> set[str]:
    """The top-level folders of the checkout that are Python packages of the product."""
    return {
        p.name
        for p in ROOT.iterdir()
        if p.is_dir() and (p / "__init__.py").is_file() and p.name not in NOT_SHIPPED and not p.name.startswith(".")
    }


def shipped_files(package: str) -> set[str]:
    """Every file of a package that an installed product needs: its modules and its templates, static files and
    fixtures (pyproject's package-data)."""
    out = set()
    for path in (ROOT / package).rglob("*"):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        out.add(path.relative_to(ROOT).as_posix())
    return out


def test_pyproject_lists_every_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    listed = {pattern.rstrip("*") for pattern in include}
    assert listed == product_packages()


def test_the_dockerfile_copies_every_package_and_runs_as_a_non_root_user() -> None:
    text = (ROOT / "Dockerfile").read_text()
    copied: set[str] = set()
    for line in text.splitlines():
        words = shlex.split(line) if line.strip().startswith("COPY") else []
        if words:
            sources = [w for w in words[1:-1] if not w.startswith("--")]
            copied.update(s.rstrip("/") for s in sources)
    missing = product_packages() - copied
    assert not missing, f"the Dockerfile does not copy {sorted(missing)}: the image's `pip install .` would lack them"
    assert {"pyproject.toml", "README.md"} <= copied
    users = re.findall(r"^USER\s+(\S+)", text, re.MULTILINE)
    assert users, "the image must name a USER"
    assert users[-1].split(":")[0] not in {"root", "0"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from the source as a clean checkout has it (the files git tracks or would, nothing it
    ignores): a build in the working tree reuses setuptools' ``build/``, which keeps every module ever built there,
    moved or deleted ones included."""
    source = tmp_path_factory.mktemp("source")
    listed = (
        subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT,
            capture_output=True,
            check=True,
            timeout=60,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        origin = ROOT / name
        if origin.is_file():  # a file deleted in the working tree but still in git's index is not part of it
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes(origin.read_bytes())
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(out), str(source)],
        check=True,
        timeout=600,
    )
    (path,) = out.glob("fairway-*.whl")
    return path


def test_the_wheel_holds_every_file_of_every_package(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = set().union(*(shipped_files(p) for p in product_packages()))
    missing = sorted(expected - names)
    assert not missing, f"{len(missing)} files of the product are not in the wheel, e.g. {missing[:5]}"
    stale = sorted(
        n for n in names if n.endswith(".py") and n.split("/")[0] in product_packages() and n not in expected
    )
    assert not stale, f"the wheel holds modules the source does not have, e.g. {stale[:5]}"


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A virtualenv outside the checkout with the wheel installed, its dependencies borrowed read-only."""
    place = tmp_path_factory.mktemp("installed")
    venv = place / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--quiet", str(wheel)],
        check=True,
        timeout=300,
    )
    target = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(target, "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "DJANGO", "DATABASE_URL", "CELERY"))}
    env.update(
        DJANGO_SETTINGS_MODULE="controlplane.settings",
        DATABASE_URL=f"sqlite:///{place / 'fairway.sqlite3'}",
        FAIRWAY_VAR_DIR=str(place / "var"),
        CELERY_BROKER_URL="memory://",
        PATH=f"{venv / 'bin'}:{env.get('PATH', '')}",
    )
    return {"venv": venv, "place": place, "env": env}


def run(installed: dict[str, object], *command: str) -> str:
    done = subprocess.run(
        list(command),
        cwd=installed["place"],
        env=installed["env"],  # type: ignore[arg-type]
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_installed_wheel_imports_from_its_own_place(installed: dict[str, object]) -> None:
    venv = installed["venv"]
    out = run(
        installed,
        str(venv / "bin" / "python"),  # type: ignore[operator]
        "-c",
        "import django; django.setup()\n"
        "import engine, planning, controlplane, quotas, scheduling, frontend, scheduling.kube.adapter as a\n"
        "for m in (engine, planning, controlplane, quotas, scheduling, frontend, a): print(m.__file__)",
    )
    files = out.split()
    assert len(files) == 7
    for file in files:
        assert str(venv) in file and str(ROOT) not in file, file


@pytest.mark.slow  # migrates from empty in a subprocess: dealt out first
def test_the_installed_wheel_checks_migrates_and_schedules(installed: dict[str, object]) -> None:
    run(installed, "python", "-m", "django", "check", "--deploy", "--fail-level", "ERROR")
    run(installed, "python", "-m", "django", "migrate", "--noinput", "-v0")
    assert "demo loaded" in run(installed, "python", "-m", "django", "load_demo")
    out = run(installed, "python", "-m", "django", "run_session")
    assert re.search(r"session ok in \d+ ms; [1-9]\d* bound", out), out


def test_the_installed_cli_answers(installed: dict[str, object]) -> None:
    out = run(installed, "fairway", "--help")
    assert "simulate" in out
