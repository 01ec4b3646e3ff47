"""``make run`` stops cleanly: its supervisor (``controlplane/devserver.py``) on the embedded default, started in a
process group of its own with an isolated var directory, home, temporary directory and working directory; once the
web server answers, a SIGTERM or SIGINT to the whole group (and, on a terminal, Ctrl-C under ``make run``) stops
every child once, the exit status is 0, no process is left, and nothing is written outside the var directory."""

from __future__ import annotations

import contextlib
import os
import pty
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support import migrated_sqlite
from tests.support.ports import free_port

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
READY_TIMEOUT = 600.0  # the first start collects the static files
STOP_TIMEOUT = 100.0  # above the supervisor's own (75 s)
WORKER_READY = " ready."  # the Celery worker's last start-up line ("worker@host ready.")


def descendants(root: int) -> set[int]:
    """Every live process below ``root`` (from /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    out: set[int] = set()
    todo = [root]
    while todo:
        for kid in parents.get(todo.pop(), []):
            if kid not in out:
                out.add(kid)
                todo.append(kid)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has stopped; only its parent (or init) has yet to reap it


def files_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


@dataclass
class Sandbox:
    """Where a run may write (``var``) and where it must not (its home, temporary and working directories)."""

    var: Path
    home: Path
    tmp: Path
    cwd: Path
    port: int = field(default_factory=free_port)

    def env(self) -> dict[str, str]:
        drop = ("DATABASE_URL", "CELERY_BROKER_URL", "CELERY_FS_DIR", "STATICFILES_STORAGE", "SECRET_KEY")
        env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("PYTEST_")}
        return {**env, "FAIRWAY_VAR_DIR": str(self.var), "HOME": str(self.home), "TMPDIR": str(self.tmp)}

    def outside_var(self) -> list[str]:
        return [f"{d.name}/{f}" for d in (self.home, self.tmp, self.cwd) for f in files_under(d)]


@pytest.fixture(scope="module")
def var_dir(tmp_path_factory: pytest.TempPathFactory, demo_sqlite_template: Path) -> Path:
    """One var directory for the module: the first run prepares it, the later ones find it ready. Its database
    starts as a copy of the run's SQLite file made by ``migrate`` and ``load_demo`` (``tests.support.migrated_sqlite``):
    each start's preparation finds the migrations applied and the demo loaded (migrating and loading the demo are
    not what this module tests; ``tests/integration/test_embedded_sqlite.py`` and the installed wheel's test run
    them), and collects the static files, makes the admin and the schedules."""
    var = tmp_path_factory.mktemp("fairway-var")
    migrated_sqlite.copy_to(demo_sqlite_template, var / "fairway.sqlite3")
    return var


# the var directories whose database beat needs (migrated, with the periodic tasks) is made: by a start's
# preparation (prepare_run, before the servers) or by the beat test itself when it runs first
_BEAT_READY: set[Path] = set()


@pytest.fixture
def sandbox(var_dir: Path, tmp_path: Path) -> Sandbox:
    dirs = {name: tmp_path / name for name in ("home", "tmp", "cwd")}
    for d in dirs.values():
        d.mkdir()
    return Sandbox(var=var_dir, **dirs)


def wait_until_served(port: int, running: Callable[[], bool], log: Callable[[], str]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        assert running(), "the run command ended before serving:\n" + log()[-4000:]
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/", timeout=5)
            return
        except urllib.error.HTTPError:
            return  # any HTTP answer (401 here) means gunicorn serves
        except OSError:
            time.sleep(0.5)
    pytest.fail("the web server did not answer:\n" + log()[-4000:])


def check_running(root: int, box: Sandbox, log: Callable[[], str]) -> set[int]:
    run = box.var / "run"
    expected = {"gunicorn.ctl", "gunicorn.pid", "celery-worker.pid", "celery-replay.pid", "celery-beat.pid"}
    deadline = time.monotonic() + 120  # gunicorn may answer before the worker and beat have written theirs
    # the worker writes its pid file before it installs its signal handlers: a signal in between ends it without
    # its "Warm shutdown" line (cleanly, but that is the start-up case, not the one these tests are about)
    # both workers (the sessions' and the replays') say they are ready
    while not (expected <= set(files_under(run)) and log().count(WORKER_READY) >= 2) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert expected <= set(files_under(run)), files_under(run)
    assert log().count(WORKER_READY) >= 2, log()[-4000:]
    procs = descendants(root)
    cmdlines = []
    for pid in procs:
        with contextlib.suppress(OSError):
            cmdlines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())
    for what in (
        "celery -A controlplane worker",
        "celery -A controlplane worker --queues replay",
        "celery -A controlplane beat",
        "gunicorn controlplane.wsgi",
    ):
        assert any(what in c for c in cmdlines), (what, cmdlines)
    assert not (box.home / ".gunicorn").exists()
    return procs


def check_stopped(procs: set[int], box: Sandbox, log: str) -> None:
    deadline = time.monotonic() + 10
    while any(alive(p) for p in procs) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in procs if alive(p)], "processes left behind"
    assert log.count("Warm shutdown") == 2, log[-4000:]  # the worker and the replay worker were told once each
    assert log.count("Handling signal: term") == 1, log[-4000:]  # so was gunicorn
    for bad in ("Cold shutdown", "Segmentation fault", "core dumped", "Traceback"):
        assert bad not in log, log[-4000:]
    assert "devserver: stopped: worker, replay, beat, web" in log
    assert files_under(box.var / "run") == []  # pid files and the control socket removed on the way out
    assert box.outside_var() == []


@pytest.mark.parametrize("sig", [signal.SIGTERM], ids=["SIGTERM"])  # SIGINT: the Ctrl-C test below, from a terminal
def test_a_signal_to_the_process_group_stops_every_child_once(sandbox: Sandbox, sig: signal.Signals) -> None:
    out = sandbox.tmp.parent / "run.log"
    with out.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "controlplane.devserver", "--port", str(sandbox.port)],
            cwd=sandbox.cwd,
            env={**sandbox.env(), "PYTHONPATH": str(REPO)},
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_until_served(sandbox.port, lambda: proc.poll() is None, out.read_text)
        procs = check_running(proc.pid, sandbox, out.read_text)
        _BEAT_READY.add(sandbox.var)  # its preparation made beat's database (prepare_run, before the servers)
        os.killpg(proc.pid, sig)
        assert proc.wait(STOP_TIMEOUT) == 0, out.read_text()[-4000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    check_stopped(procs, sandbox, out.read_text())
    assert f"devserver: {sig.name}: stopping worker, replay, beat, web" in out.read_text()


@contextlib.contextmanager
def on_a_terminal(argv: list[str], cwd: Path, env: dict[str, str]) -> Iterator[tuple[int, int, list[bytes]]]:
    """Run ``argv`` as the session leader of a new pseudo-terminal; yields (pid, master fd, output chunks)."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    chunks: list[bytes] = []

    def drain() -> None:  # the terminal's buffer must never fill, or the children block writing to it
        with contextlib.suppress(OSError):
            while data := os.read(fd, 65536):
                chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        yield pid, fd, chunks
    finally:
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG) == (0, 0):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        reader.join(5)
        os.close(fd)


def test_ctrl_c_on_the_terminal_stops_make_run_with_status_0(sandbox: Sandbox) -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    # -o install: the virtualenv is the one running these tests (make run would otherwise reinstall it)
    argv = [make, "-s", "--no-print-directory", "-o", "install", "-C", str(REPO), "run", f"PORT={sandbox.port}"]
    with on_a_terminal(argv, sandbox.cwd, sandbox.env()) as (pid, fd, chunks):

        def running() -> bool:
            return os.waitpid(pid, os.WNOHANG) == (0, 0)

        def log() -> str:
            return b"".join(chunks).decode(errors="replace")

        wait_until_served(sandbox.port, running, log)
        procs = check_running(pid, sandbox, log)
        _BEAT_READY.add(sandbox.var)
        os.write(fd, b"\x03")  # Ctrl-C: the terminal sends SIGINT to its foreground process group
        deadline = time.monotonic() + STOP_TIMEOUT
        status = None
        while status is None and time.monotonic() < deadline:
            done, raw = os.waitpid(pid, os.WNOHANG)
            status = raw if done else None
            time.sleep(0.1)
        assert status is not None, "make run did not stop:\n" + log()[-4000:]
        time.sleep(0.5)  # the last lines
        assert os.waitstatus_to_exitcode(status) == 0, log()[-4000:]
        text = log()
    check_stopped(procs, sandbox, text)
    assert "devserver: SIGINT: stopping worker, replay, beat, web" in text
    assert "make: ***" not in text


@pytest.mark.parametrize(
    ("url", "processes"), [("", 1), ("sqlite:////tmp/x.sqlite3", 1), ("postgres://u@127.0.0.1:5432/db", 2)]
)
def test_the_worker_runs_one_process_on_the_embedded_sqlite(
    monkeypatch: pytest.MonkeyPatch, url: str, processes: int
) -> None:
    """SQLite has one writer at a time: a second worker process would only wait for the lock, and sessions moving
    between two processes would read the whole cluster each time (``scheduling.feed.mirror``)."""
    from controlplane import devserver

    monkeypatch.setenv("DATABASE_URL", url)
    concurrency = devserver.worker_concurrency(devserver.embedded_sqlite())
    assert concurrency == processes
    worker = devserver.server_commands(sys.executable, Path("/tmp/v"), "127.0.0.1", 8000, concurrency)["worker"]
    assert worker[worker.index("--concurrency") + 1] == str(processes)


@pytest.mark.parametrize(("after", "locked"), [(0.5, True), (0.3, False), (1.5, False)],
                         ids=["in-the-database", "first-tick", "asleep"])  # fmt: skip
def test_beat_stops_cleanly_on_a_term_at_any_point_of_its_start(sandbox: Sandbox, after: float, locked: bool) -> None:
    """Beat's TERM lands ``after`` seconds past its "beat: Starting..." line: while it waits for the database to
    set up its entries (the test holds SQLite's write lock until after the TERM, as a long session does on a busy
    machine), during its first tick, or while it sleeps. Each time it exits 0 without a traceback (celery's own
    handler ran database work inside the signal handler: a traceback, or a beat that did not stop)."""
    env = {**sandbox.env(), "PYTHONPATH": str(REPO)}
    if sandbox.var not in _BEAT_READY:
        # the database beat needs (migrated, with the periodic tasks), made once per module's var directory
        manage = [sys.executable, str(REPO / "manage.py")]
        subprocess.run([*manage, "prepare_run"], cwd=sandbox.cwd, env=env, check=True, timeout=600,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        _BEAT_READY.add(sandbox.var)
    from controlplane import devserver

    argv = devserver.server_commands(sys.executable, sandbox.var, "127.0.0.1", sandbox.port)["beat"]
    (sandbox.var / "run").mkdir(exist_ok=True)
    proc = subprocess.Popen(argv, cwd=sandbox.cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)  # fmt: skip
    lines: list[str] = []
    lock = sqlite3.connect(sandbox.var / "fairway.sqlite3", isolation_level=None)
    try:
        if locked:
            lock.execute("BEGIN EXCLUSIVE")
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "beat: Starting..." in line:
                break
        assert lines and "beat: Starting..." in lines[-1], "".join(lines)[-4000:]
        time.sleep(after)
        proc.send_signal(signal.SIGTERM)
        if locked:
            time.sleep(0.5)
            lock.execute("COMMIT")
        rest, _ = proc.communicate(timeout=30)  # generous: the stop comes within a fraction of a second
        log = "".join(lines) + rest
        assert proc.returncode == 0, log[-4000:]
        assert "Traceback" not in log, log[-4000:]
    finally:
        lock.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
