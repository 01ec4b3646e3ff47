"""``make run``'s supervisor: prepare the embedded default, start web + worker + beat, stop them once.

    python -m controlplane.devserver [--host 127.0.0.1] [--port 8000]

It migrates, collects the static files, loads the demo, creates the admin and the schedules, then starts the
Celery worker, the replay worker (the ``replay`` queue only), Celery beat and gunicorn, each in a process group of its
own, so that a Ctrl-C or a TERM reaches them once, from here: on SIGINT, SIGTERM, SIGHUP or SIGQUIT every child gets one SIGTERM (warm shutdown), the
supervisor waits for all of them (SIGKILL after ``STOP_TIMEOUT`` seconds for one that hangs, after
``HOLDS_NO_WORK``'s shorter grace for beat, which counts as a clean stop) and exits 0. A
repeated Ctrl-C while stopping only says what it still waits for. A child that dies on its own stops the others
and the supervisor exits 1. Children also get SIGTERM if the supervisor itself is killed (Linux
``PR_SET_PDEATHSIG``).

On a terminal the supervisor takes the terminal's foreground for its own process group while it runs (and gives
it back before it exits), so the Ctrl-C reaches it alone and not ``make`` above it: GNU make re-raises an
interrupt it receives itself, which would turn a clean stop into exit status 130.

Every runtime file stays under the var directory (``FAIRWAY_VAR_DIR``, default ``var/``): the database, the broker
folders, ``run/`` with the pid files, gunicorn's control socket and worker heartbeat files, and beat's schedule.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from controlplane.children import die_with_parent

BASE_DIR = Path(__file__).resolve().parent.parent
# Seconds a child may take to stop after its SIGTERM before it is killed: longer than the embedded SQLite's busy
# timeout (60 s, settings.py), since a child waiting for the database's write lock handles its TERM only when that
# wait ends (beat, behind a long scheduling session on a loaded machine).
STOP_TIMEOUT = 75.0
# Children that hold no work, and the seconds they may take to stop after their TERM before they are killed; such a
# kill is still a clean stop. Beat only sends due tasks (its schedule and last runs live in the database); its
# scheduler (controlplane/beat.py) stops within a fraction of a second of its TERM (once the database lets it go),
# so this is a safety net.
HOLDS_NO_WORK = {"beat": 15.0}
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
_SOCKET_PATH_MAX = 100  # sun_path holds 108 bytes; longer var paths run gunicorn without its control socket


def var_dir() -> Path:
    """The var directory as the settings compute it, made absolute (children may run from another directory)."""
    return Path(os.environ.get("FAIRWAY_VAR_DIR") or BASE_DIR / "var").resolve()


def setup_commands(python: str, demo_size: str = "small") -> list[list[str]]:
    """The preparation before the servers, idempotent: migrate, collectstatic, load_demo, ensure_admin and
    ensure_schedules, in one process (``manage.py prepare_run``) rather than five start-ups of Django."""
    return [[python, str(BASE_DIR / "manage.py"), "prepare_run", "--demo-size", demo_size]]


def embedded_sqlite() -> bool:
    """Whether the settings will use the embedded SQLite: no ``DATABASE_URL`` in the environment or in ``.env``
    (read as the settings read it), or a ``sqlite://`` one."""
    import environ

    environ.Env.read_env(BASE_DIR / ".env", overwrite=False)
    url = os.environ.get("DATABASE_URL", "")
    return not url or url.startswith("sqlite")


def worker_concurrency(sqlite: bool) -> int:
    """One worker process on SQLite, two otherwise. SQLite has one writer at a time and every task writes, so a
    second process only waits for the first one's lock; and one process keeps running the cluster's sessions, so
    its in-memory copy of the cluster stays current (``scheduling.feed.mirror``: a session that another process ran
    last makes the next one read the whole cluster again)."""
    return 1 if sqlite else 2


CLI_DEFAULT_URL = "http://127.0.0.1:8000"  # where ``fairway`` (the CLI) looks without FAIRWAY_URL


def started_lines(host: str, port: int) -> list[str]:
    """What the development server says once its servers start: where, and, when that is not where the command line
    looks by default, the ``FAIRWAY_URL`` to export (else ``fairway`` beside the printed token reaches nothing)."""
    where = f"http://{host}:{port}"
    lines = [f"Fairway is starting on {where}/  (API docs: {where}/api/docs/, admin: {where}/admin/); Ctrl-C stops it"]
    if where != CLI_DEFAULT_URL:
        lines.append(f"the command line: export FAIRWAY_URL={where}  (beside FAIRWAY_TOKEN above)")
    return lines


def server_commands(python: str, var: Path, host: str, port: int, concurrency: int = 2) -> dict[str, list[str]]:
    """The four long-running children (the worker, the replay worker, beat, the web server), every file they write
    under ``var``."""
    run = var / "run"
    bindir = Path(python).parent
    celery = [str(bindir / "celery"), "-A", "controlplane"]
    control = run / "gunicorn.ctl"
    socket = ["--control-socket", str(control)] if len(str(control)) <= _SOCKET_PATH_MAX else ["--no-control-socket"]
    return {
        "worker": [
            *celery,
            "worker",
            "--loglevel",
            "INFO",
            "--concurrency",
            str(concurrency),
            "--hostname",
            "worker@%h",
            "--pidfile",
            str(run / "celery-worker.pid"),
        ],
        # the replay worker (planning.tasks.run_replay: minutes of CPU) on its own queue, one process, so that a
        # replay never waits behind the sessions nor holds them up; the worker above consumes the default queue only
        "replay": [
            *celery,
            "worker",
            "--queues",
            "replay,estimates",  # and the start estimates (planning.tasks.estimate_starts): off the sessions too
            "--loglevel",
            "INFO",
            "--concurrency",
            "1",
            "--hostname",
            "replay@%h",
            "--pidfile",
            str(run / "celery-replay.pid"),
        ],
        "beat": [
            *celery,
            "beat",
            "--loglevel",
            "INFO",
            "--schedule",
            str(var / "celerybeat-schedule"),
            "--pidfile",
            str(run / "celery-beat.pid"),
        ],
        "web": [
            str(bindir / "gunicorn"),
            "controlplane.wsgi:application",
            "--bind",
            f"{host}:{port}",
            "--workers",
            "2",
            "--threads",
            "4",
            "--access-logfile",
            "-",
            "--graceful-timeout",
            "10",
            "--pid",
            str(run / "gunicorn.pid"),
            "--worker-tmp-dir",
            str(run),
            *socket,
        ],
    }


class Terminal:
    """The terminal's foreground process group: taken for this process's own group, given back on exit."""

    def __init__(self) -> None:
        self.fd: int | None = None
        self.previous = 0

    def take(self) -> None:
        try:
            fd = sys.stdin.fileno()
            if not os.isatty(fd) or os.tcgetpgrp(fd) != os.getpgrp():
                return  # no terminal, or not in its foreground: signals come from elsewhere
            previous = os.getpgrp()
            if os.getpid() != previous:
                os.setpgid(0, 0)
            self._set(fd, os.getpgrp())
        except (OSError, ValueError):
            return
        self.fd, self.previous = fd, previous

    def give_back(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                self._set(self.fd, self.previous)
            self.fd = None

    @staticmethod
    def _set(fd: int, pgrp: int) -> None:
        old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # a background group may not set it otherwise
        try:
            os.tcsetpgrp(fd, pgrp)
        finally:
            signal.signal(signal.SIGTTOU, old)


class Supervisor:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.children: dict[str, subprocess.Popen[bytes]] = {}
        self.signalled: set[int] = set()  # pids already sent their one SIGTERM
        self.stop_signal: int | None = None
        self.stop_started = 0.0
        self.killed_idle: set[str] = set()  # children of HOLDS_NO_WORK killed after their grace

    # -- signals ------------------------------------------------------------------------------------------------
    def install(self) -> None:
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._on_signal)
        signal.signal(signal.SIGTSTP, signal.SIG_IGN)  # a stopped supervisor would hold the terminal

    def _on_signal(self, signum: int, frame: object) -> None:
        if self.stop_signal is None:
            self.stop_signal = signum
            self.stop_started = time.monotonic()
            self.say(f"{signal.Signals(signum).name}: stopping {', '.join(self.children) or 'setup'}")
            self._terminate_all()
        else:
            self.say(f"still stopping: waiting for {', '.join(self.running()) or 'nothing'}")

    # -- children -----------------------------------------------------------------------------------------------
    def start(self, name: str, argv: Sequence[str]) -> subprocess.Popen[bytes]:
        child = subprocess.Popen(
            list(argv),
            env=self.env,
            stdin=subprocess.DEVNULL,
            process_group=0,  # its own group: neither the terminal's Ctrl-C nor a TERM to our group reaches it
            preexec_fn=die_with_parent,
        )
        self.children[name] = child
        if self.stop_signal is not None:  # the stop came while it was starting: it gets its TERM too
            self._terminate_all()
        return child

    def _remove_orphan_pidfiles(self) -> None:
        """A child killed by a signal (before its own handler was installed, or by the stop timeout) could not remove
        its pid file: the supervisor does, so that ``var/run`` holds nothing once everything has stopped."""
        for child in self.children.values():
            argv = [str(a) for a in child.args]
            if child.returncode is not None and child.returncode < 0 and "--pidfile" in argv[:-1]:
                Path(argv[argv.index("--pidfile") + 1]).unlink(missing_ok=True)

    def running(self) -> list[str]:
        return [n for n, c in self.children.items() if c.poll() is None]

    def _terminate_all(self) -> None:
        """One SIGTERM to every running child that has not had one (never a second: a second TERM would turn the
        worker's warm shutdown into a cold one)."""
        for child in list(self.children.values()):
            if child.poll() is None and child.pid not in self.signalled:
                self.signalled.add(child.pid)
                with contextlib.suppress(ProcessLookupError):
                    child.send_signal(signal.SIGTERM)

    def _kill_stragglers(self) -> None:
        for name in self.running():
            self.say(f"{name} did not stop within {STOP_TIMEOUT:g}s: killing it")
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.children[name].pid, signal.SIGKILL)

    def _kill_idle(self, waited: float) -> None:
        for name in self.running():
            grace = HOLDS_NO_WORK.get(name)
            if grace is not None and waited > grace and name not in self.killed_idle:
                self.say(f"{name} did not stop within {grace:g}s of its TERM: killing it (it holds no work)")
                self.killed_idle.add(name)
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.children[name].pid, signal.SIGKILL)

    def wait_all(self) -> None:
        """Wait until every child has exited, killing those that outlive the stop timeout (``HOLDS_NO_WORK``: their
        shorter grace)."""
        while self.running():
            if self.stop_signal is not None:
                waited = time.monotonic() - self.stop_started
                self._kill_idle(waited)
                if waited > STOP_TIMEOUT:
                    self._kill_stragglers()
            time.sleep(0.1)

    def run_setup(self, name: str, argv: Sequence[str]) -> bool:
        """Run one preparation command to its end; False when it failed or a stop signal came."""
        child = self.start(name, argv)
        self.wait_all()
        del self.children[name]
        if self.stop_signal is not None:
            return False
        if child.returncode != 0:
            self.say(f"{name} failed (exit status {child.returncode})")
            return False
        return True

    def serve(self, commands: dict[str, list[str]]) -> int:
        """Start the servers and watch them; returns the exit status."""
        for name, argv in commands.items():
            if self.stop_signal is not None:
                break
            self.start(name, argv)
        failed: str | None = None
        while self.stop_signal is None:
            for name, child in self.children.items():
                if child.poll() is not None:
                    failed = name
                    break
            if failed:
                self.say(
                    f"{failed} exited on its own (exit status {self.children[failed].returncode}): stopping the rest"
                )
                self.stop_signal = signal.SIGTERM
                self.stop_started = time.monotonic()
                self._terminate_all()
                break
            time.sleep(0.2)
        self.wait_all()
        self._remove_orphan_pidfiles()
        if failed:
            return 1
        # A child that died of the very TERM we sent it stopped as asked: one that was still starting (beat
        # installs its handler only once it has loaded the app) has no handler yet and dies with -SIGTERM.
        bad = {
            n: c.returncode
            for n, c in self.children.items()
            if c.returncode != 0
            and not (c.returncode == -signal.SIGTERM and c.pid in self.signalled)
            and not (c.returncode == -signal.SIGKILL and n in self.killed_idle)
        }
        if bad:
            self.say("stopped, but not cleanly: " + ", ".join(f"{n} exit status {rc}" for n, rc in bad.items()))
            return 1
        self.say("stopped: " + ", ".join(self.children))
        return 0

    @staticmethod
    def say(text: str) -> None:
        sys.stderr.write(f"devserver: {text}\n")
        sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m controlplane.devserver", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--demo-size",
        choices=("small", "large"),
        default="small",
        help="the demo to load into an empty database (manage.py load_demo --size): large is 5,000 nodes",
    )
    args = parser.parse_args(argv)

    var = var_dir()
    (var / "run").mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "FAIRWAY_VAR_DIR": str(var), "PYTHONUNBUFFERED": "1"}
    python = sys.executable
    terminal = Terminal()
    sup = Supervisor(env)
    sup.install()
    terminal.take()
    try:
        for command in setup_commands(python, args.demo_size):
            if not sup.run_setup(command[2], command):
                return 0 if sup.stop_signal is not None else 1
        for line in started_lines(args.host, args.port):
            sup.say(line)
        concurrency = worker_concurrency(embedded_sqlite())
        return sup.serve(server_commands(python, var, args.host, args.port, concurrency))
    finally:
        terminal.give_back()


if __name__ == "__main__":
    sys.exit(main())
