"""The control plane's own plumbing, without the built binaries: where the build puts them (the pinned versions,
the cache folder), and a start that fails stops what it started, says why and leaves no folder behind."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.support.kube_apiserver import BUILD_SCRIPT, REPO, Binaries, ControlPlane, ControlPlaneError, binaries


def _required(gomod: Path, module: str) -> str:
    match = re.search(rf"^\s*(?:require\s+)?{re.escape(module)} (v\S+)", gomod.read_text(), re.M)
    assert match, f"{gomod} does not require {module}"
    return match.group(1)


def test_the_binaries_are_kept_by_pinned_version_under_the_tools_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    k8s = _required(REPO / "tools" / "kube" / "go.mod", "k8s.io/kubernetes")
    etcd = _required(REPO / "tools" / "etcd" / "go.mod", "go.etcd.io/etcd/server/v3")
    assert re.fullmatch(r"v1\.3\d\.\d+", k8s) and re.fullmatch(r"v3\.[67]\.\d+", etcd)
    monkeypatch.setenv("FAIRWAY_TOOLS_CACHE", str(tmp_path))
    bins = binaries()
    assert bins.etcd == tmp_path / f"etcd-{etcd}" / "etcd"
    assert bins.kube_apiserver == tmp_path / f"k8s-{k8s}" / "kube-apiserver"
    assert bins.kube_scheduler.parent == bins.kube_controller_manager.parent == bins.kube_apiserver.parent
    assert bins.missing() == [bins.etcd, bins.kube_apiserver]


def test_the_staging_modules_are_pinned_to_the_matching_release() -> None:
    gomod = (REPO / "tools" / "kube" / "go.mod").read_text()
    minor, patch = re.fullmatch(r"v1\.(\d+)\.(\d+)", _required(REPO / "tools" / "kube" / "go.mod",
                                                              "k8s.io/kubernetes")).groups()  # fmt: skip
    replaced = re.findall(r"^\s*(k8s\.io/\S+) => (k8s\.io/\S+) (v\S+)$", gomod, re.M)
    assert len(replaced) >= 25 and {"k8s.io/api", "k8s.io/apiserver", "k8s.io/client-go"} <= {r[0] for r in replaced}
    for module, target, version in replaced:
        assert (target, version) == (module, f"v0.{minor}.{patch}"), module


def test_the_build_script_builds_nothing_when_asked_for_the_paths(tmp_path: Path) -> None:
    out = subprocess.run(
        [str(BUILD_SCRIPT), "--paths"], capture_output=True, text=True, check=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert out.stdout.splitlines()[0].startswith(f"etcd={tmp_path}/.cache/fairway/tools/etcd-v")
    assert not (tmp_path / ".cache").exists()


@pytest.mark.parametrize(("ci", "code"), [("", 0), ("false", 0), ("true", 1)])
def test_without_go_the_build_is_skipped_except_under_ci(tmp_path: Path, ci: str, code: int) -> None:
    bin_dir = tmp_path / "bin"  # the commands the script uses, and no go
    bin_dir.mkdir()
    for command in ("bash", "awk", "dirname", "basename", "mkdir"):
        (bin_dir / command).symlink_to(shutil.which(command))  # type: ignore[arg-type]
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "FAIRWAY_TOOLS_CACHE": str(tmp_path / "tools"), "CI": ci}
    out = subprocess.run([str(BUILD_SCRIPT)], capture_output=True, text=True, env=env)
    assert out.returncode == code, out.stderr
    assert "Go is not installed" in out.stdout + out.stderr
    assert not any(p.is_file() for p in (tmp_path / "tools").rglob("*"))


def test_missing_binaries_are_named_with_the_command_that_builds_them(tmp_path: Path) -> None:
    bins = Binaries(*(tmp_path / name for name in ("etcd", "kube-apiserver", "kube-scheduler", "kcm")))
    with pytest.raises(ControlPlaneError, match=r"not built: .*/etcd, .*/kube-apiserver \(make kube-tools"):
        ControlPlane(bins).start()


def test_a_failed_start_says_why_and_leaves_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    etcd = tmp_path / "etcd"
    etcd.write_text("#!/bin/sh\necho 'etcd: cannot listen: address in use' >&2\nexit 3\n")
    etcd.chmod(0o755)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    plane = ControlPlane(Binaries(etcd, etcd, etcd, etcd), start_timeout=30)
    with pytest.raises(ControlPlaneError, match=r"(?s)etcd did not become healthy \(exited with 3\).*address in use"):
        plane.start()
    assert plane.folder is None and plane.etcd is None
    assert list(scratch.iterdir()) == []  # its data folder and log removed


def _counting_etcd(tmp_path: Path, message: str) -> tuple[Path, Path]:
    count = tmp_path / "starts"
    etcd = tmp_path / "etcd"
    etcd.write_text(f"#!/bin/sh\necho x >> {count}\necho '{message}' >&2\nexit 1\n")
    etcd.chmod(0o755)
    return etcd, count


def test_a_port_taken_before_the_server_binds_it_is_started_again_on_other_ports(tmp_path: Path) -> None:
    etcd, count = _counting_etcd(tmp_path, "listen tcp 127.0.0.1:48161: bind: address already in use")
    plane = ControlPlane(Binaries(etcd, etcd, etcd, etcd), start_timeout=30)
    with pytest.raises(ControlPlaneError, match=r"address already in use"):
        plane.start()
    assert len(count.read_text().split()) == 3  # three draws of ports, then the last failure is told
    assert plane.folder is None and plane.etcd is None


def test_any_other_failed_start_is_not_tried_again(tmp_path: Path) -> None:
    etcd, count = _counting_etcd(tmp_path, "member has already been bootstrapped")
    with pytest.raises(ControlPlaneError, match=r"already been bootstrapped"):
        ControlPlane(Binaries(etcd, etcd, etcd, etcd), start_timeout=30).start()
    assert len(count.read_text().split()) == 1


def test_test_ports_are_drawn_below_the_range_outgoing_connections_use() -> None:
    from tests.support.ports import _ephemeral_low, free_port

    low = _ephemeral_low()
    ports = {free_port() for _ in range(50)}
    assert all(10_000 <= port < low for port in ports) and len(ports) > 40
