"""Benchmark: Fairway side by side with kube-scheduler, binding the same pods through the same real API server build.

One run does, each on a fresh control plane (``tests/support/kube_apiserver.ControlPlane``: etcd + kube-apiserver
v1.34.2 built by ``make kube-tools``):

1. **fairway**: N nodes registered through the API (stand-in kubelets: the Node, its status with the Ready
   condition, its Lease; untainted), Volcano Queues and namespaces mapped to them (``scheduling.volcano.sh/queue-name``),
   then P pending pods with Fairway's ``schedulerName`` created through the API server by a process of their own
   (``--create-threads`` threads on keep-alive connections) while Fairway runs as the product does, in this process:
   the adapter's own loop (``Adapter.run``: informers in threads, a pass = mirror in + send, the bindings through the
   Binding subresource) in a thread, and a scheduling session (``scheduling.tasks.run_session``) every
   ``--session-period`` seconds in the main thread, as Celery beat sends them, until every pod is bound;
2. **kube-scheduler**: the same nodes and pods (``schedulerName: default-scheduler``) with the real ``kube-scheduler``
   of the same build (default profile, leader election off, ``--kube-api-qps``/``--kube-api-burst`` raised);
3. **fairway gangs+quotas** (unless ``--no-gangs``): the same pods in Volcano PodGroups of ``--gang`` members
   (``minMember`` = the gang), queues with a deserved share and a capability (room for their whole demand, so
   everything is admitted in the end).

The same measurement for every scheduler: a watcher process of its own (a watch on the pods, from before the first
create) records the wall time at which each pod's ``spec.nodeName`` first appears; the creator process records each
create's client-side completion time (``time.time()``, the same clock, one machine). Latency is
creation-to-binding: the bind seen by the watch minus the client-side completion of the create (the server's
``metadata.creationTimestamp`` has 1 s resolution; it is kept in ``--json`` as ``server_created_spread``).
Throughput is P / (first create sent -> last bind seen) and, for the bind phase alone, P / (first bind -> last bind).

    .venv/bin/python bench/bench_kube.py                           # 1,000 nodes, 10,000 pods, the three runs
    .venv/bin/python bench/bench_kube.py --nodes 100 --pods 1000 --json

``DATABASE_URL`` picks Fairway's database (default ``postgres://postgres@127.0.0.1:5432/fairway_bench_kube``, created
and migrated when missing). Each Fairway run makes a cluster row of its own and deletes it at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import queue
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/fairway_bench_kube"
NODE_ALLOCATABLE = {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8", "pods": "110"}
BENCH_LABEL = "fairway-bench"
KUBE_SCHEDULER = "default-scheduler"
VOLCANO = ("scheduling.volcano.sh", "v1beta1")


# -- HTTP without the official client's models (the load processes) ---------------------------------------------


class Rest:
    """Keep-alive HTTPS to the API server with a bearer token (urllib3; one pool shared by the threads)."""

    def __init__(self, url: str, token: str, ca_file: str, *, connections: int = 4) -> None:
        import urllib3

        self.url = url
        self.pool = urllib3.PoolManager(num_pools=2, maxsize=connections, block=True, ca_certs=ca_file,
                                        cert_reqs="CERT_REQUIRED", retries=False)  # fmt: skip
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                        "Accept": "application/json"}  # fmt: skip

    def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
        import orjson

        data = None if body is None else orjson.dumps(body)
        return self.pool.request(method, self.url + path, body=data, headers=self.headers, **kwargs)


def _load_spec(path: str) -> dict[str, Any]:
    return dict(json.loads(Path(path).read_text()))


def child_create(spec_path: str, out_path: str) -> None:
    """Create the spec's pods (in order, ``threads`` at a time); record each create's wall-clock send and completion."""
    spec = _load_spec(spec_path)
    pods: list[dict[str, Any]] = spec["pods"]
    rest = Rest(spec["url"], spec["token"], spec["ca"], connections=spec["threads"])
    work: queue.Queue[int] = queue.Queue()
    for i in range(len(pods)):
        work.put(i)
    sent = [0.0] * len(pods)
    done = [0.0] * len(pods)
    failures: list[str] = []

    def worker() -> None:
        while True:
            try:
                i = work.get_nowait()
            except queue.Empty:
                return
            pod = pods[i]
            ns = pod["metadata"]["namespace"]
            for attempt in range(5):
                sent[i] = time.time()
                response = rest.call("POST", f"/api/v1/namespaces/{ns}/pods", pod)
                if response.status in (200, 201):
                    done[i] = time.time()
                    break
                if response.status == 429 or response.status >= 500:
                    time.sleep(0.05 * (attempt + 1))
                    continue
                failures.append(f"{ns}/{pod['metadata']['name']}: {response.status} {response.data[:200]!r}")
                break

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(spec["threads"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out = {
        "created": {
            f"{p['metadata']['namespace']}/{p['metadata']['name']}": [sent[i], done[i]]
            for i, p in enumerate(pods)
            if done[i]
        },
        "failures": failures,
    }
    Path(out_path).write_text(json.dumps(out))


def child_watch(spec_path: str, out_path: str) -> None:
    """Watch the bench's pods from a list made before any exists; record when each one's ``spec.nodeName`` first
    appears (wall clock) and its server-side creationTimestamp; stop when ``expect`` pods are bound (or timeout)."""
    import orjson

    spec = _load_spec(spec_path)
    rest = Rest(spec["url"], spec["token"], spec["ca"], connections=2)
    selector = f"labelSelector={BENCH_LABEL}%3D{spec['tag']}"
    listed = rest.call("GET", f"/api/v1/pods?{selector}&limit=1")
    version = orjson.loads(listed.data)["metadata"]["resourceVersion"]
    bound: dict[str, list[Any]] = {}
    created: dict[str, str] = {}
    deadline = time.monotonic() + spec["timeout"]
    announced = False
    while len(bound) < spec["expect"] and time.monotonic() < deadline:
        response = rest.call(
            "GET", f"/api/v1/pods?{selector}&watch=1&allowWatchBookmarks=true&resourceVersion={version}"
            f"&timeoutSeconds=60", preload_content=False, timeout=None)  # fmt: skip
        if response.status != 200:
            raise SystemExit(f"watch answered {response.status}: {response.read()[:300]!r}")
        if not announced:
            print("watching", flush=True)  # the orchestrator starts the creator now
            announced = True
        buffer = b""
        for chunk in response.stream(65536):
            now = time.time()
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if not line.strip():
                    continue
                event = orjson.loads(line)
                obj = event.get("object") or {}
                meta = obj.get("metadata") or {}
                if meta.get("resourceVersion"):
                    version = meta["resourceVersion"]
                if event.get("type") not in ("ADDED", "MODIFIED"):
                    continue
                key = f"{meta.get('namespace')}/{meta.get('name')}"
                created.setdefault(key, meta.get("creationTimestamp", ""))
                node = (obj.get("spec") or {}).get("nodeName")
                if node and key not in bound:
                    bound[key] = [now, node]
            if len(bound) >= spec["expect"]:
                break
        response.release_conn()
    Path(out_path).write_text(json.dumps({"bound": bound, "server_created": created}))


# -- the cluster: nodes, queues, namespaces, pods ----------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    nodes: int
    pods: int
    namespaces: int
    gang: int  # 0: plain pods; else PodGroups of this many members (minMember the same)
    quotas: bool  # queues with deserved and capability

    def namespace(self, i: int, tag: str) -> str:
        return f"bench-{tag}-ns{i}"

    def queue(self, i: int, tag: str) -> str:
        return f"bench-{tag}-q{i}"

    def pod_request(self, i: int) -> dict[str, str]:
        request = {"cpu": "1", "memory": "4Gi"}
        if i % 4 == 0:
            request["nvidia.com/gpu"] = "1"
        return request

    def pod_namespace(self, i: int) -> int:
        # gangs stay within one namespace: the pods of a gang are consecutive
        return (i // self.gang if self.gang else i) % self.namespaces

    def demand(self, ns: int) -> dict[str, int]:
        """Whole cores, GiB and GPUs the namespace's pods ask for together."""
        total = {"cpu": 0, "memory": 0, "nvidia.com/gpu": 0}
        for i in range(self.pods):
            if self.pod_namespace(i) == ns:
                total["cpu"] += 1
                total["memory"] += 4
                total["nvidia.com/gpu"] += int(i % 4 == 0)
        return total

    def pods_of(self, tag: str, scheduler: str) -> list[dict[str, Any]]:
        out = []
        for i in range(self.pods):
            ns = self.namespace(self.pod_namespace(i), tag)
            meta: dict[str, Any] = {"name": f"p{i:06d}", "namespace": ns, "labels": {BENCH_LABEL: tag}}
            if self.gang:
                meta["annotations"] = {"scheduling.k8s.io/group-name": f"g{i // self.gang:05d}"}
            request = self.pod_request(i)
            container = {"name": "main", "image": "registry.k8s.io/pause:3.10",
                         "resources": {"requests": request, "limits": {k: v for k, v in request.items()
                                                                       if k == "nvidia.com/gpu"}}}  # fmt: skip
            out.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
                        "spec": {"schedulerName": scheduler, "containers": [container],
                                 "terminationGracePeriodSeconds": 0}})  # fmt: skip
        return out


def _register_nodes(plane: Any, count: int, threads: int) -> None:
    """The nodes as kubelets register them (``tests/support/kube_kubelet.KubeletStandIn``), ``threads`` at a time."""
    from tests.support.kube_kubelet import KubeletStandIn

    names = [f"node-{i:05d}" for i in range(count)]
    chunks = [names[k::threads] for k in range(threads)]

    def register(chunk: list[str]) -> None:
        with plane.api_client() as api:
            KubeletStandIn(api, {n: NODE_ALLOCATABLE for n in chunk}).register(untaint=True)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(register, [c for c in chunks if c]))


def _setup_trees(plane: Any, work: Workload, tag: str, fairway: bool) -> None:
    """Namespaces (mapped to a queue each for Fairway), Volcano Queues and, with gangs, the PodGroups."""
    from kubernetes import client as k8s

    with plane.api_client() as api:
        core, custom = k8s.CoreV1Api(api), k8s.CustomObjectsApi(api)
        for i in range(work.namespaces):
            annotations = {"scheduling.volcano.sh/queue-name": work.queue(i, tag)} if fairway else None
            core.create_namespace({"metadata": {"name": work.namespace(i, tag), "annotations": annotations}})
            if not fairway:
                continue
            spec: dict[str, Any] = {"weight": 1, "reclaimable": True}
            if work.quotas:
                demand = work.demand(i)
                # deserved: the queue's demand; the capability room for it and a little more: everything is
                # admitted in the end, through the capability and deserved checks of every session
                spec["deserved"] = {"cpu": str(demand["cpu"]), "memory": f"{demand['memory']}Gi"}
                spec["capability"] = {"cpu": str(demand["cpu"] + 8), "memory": f"{demand['memory'] + 32}Gi",
                                      "nvidia.com/gpu": str(demand["nvidia.com/gpu"] + 8)}  # fmt: skip
            custom.create_cluster_custom_object(*VOLCANO, "queues", {
                "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                "metadata": {"name": work.queue(i, tag)}, "spec": spec})  # fmt: skip
        if fairway and work.gang:

            def group(g: int) -> None:
                ns_index = work.pod_namespace(g * work.gang)
                body = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": f"g{g:05d}", "namespace": work.namespace(ns_index, tag)},
                        "spec": {"queue": work.queue(ns_index, tag),
                                 "minMember": min(work.gang, work.pods - g * work.gang)}}  # fmt: skip
                custom.create_namespaced_custom_object(*VOLCANO, body["metadata"]["namespace"], "podgroups", body)

            with ThreadPoolExecutor(8) as pool:
                list(pool.map(group, range((work.pods + work.gang - 1) // work.gang)))


# -- the load processes ------------------------------------------------------------------------------------------


class Load:
    """The watcher and the creator, as processes of their own (so neither shares a CPU-bound interpreter with the
    scheduler under test)."""

    def __init__(self, plane: Any, pods: list[dict[str, Any]], tag: str, *, threads: int, timeout: float) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="fairway-bench-kube-"))
        base = {"url": plane.url, "token": plane.admin_token, "ca": str(plane.ca_file), "tag": tag}
        (self.folder / "watch.json").write_text(json.dumps({**base, "expect": len(pods), "timeout": timeout}))
        (self.folder / "create.json").write_text(json.dumps({**base, "pods": pods, "threads": threads}))
        self.watcher: subprocess.Popen[str] | None = None
        self.creator: subprocess.Popen[str] | None = None
        self.timeout = timeout

    def _child(self, role: str, **kwargs: Any) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, __file__, "--child", role, "--spec", str(self.folder / f"{role}.json"),
                                 "--out", str(self.folder / f"{role}.out.json")], text=True, **kwargs)  # fmt: skip

    def start(self) -> None:
        self.watcher = self._child("watch", stdout=subprocess.PIPE)
        assert self.watcher.stdout is not None
        line = self.watcher.stdout.readline()
        if line.strip() != "watching":
            raise RuntimeError(f"the watcher did not start (exit {self.watcher.wait()})")
        self.creator = self._child("create")

    def running(self) -> bool:
        return self.watcher is not None and self.watcher.poll() is None

    def finish(self) -> dict[str, Any]:
        assert self.watcher is not None and self.creator is not None
        self.creator.wait(self.timeout + 60)
        self.watcher.wait(self.timeout + 60)  # it gives up after ``timeout`` itself
        if self.creator.returncode or self.watcher.returncode:
            raise RuntimeError(f"a load process failed (creator {self.creator.returncode}, "
                               f"watcher {self.watcher.returncode})")  # fmt: skip
        out = {
            "create": json.loads((self.folder / "create.out.json").read_text()),
            "watch": json.loads((self.folder / "watch.out.json").read_text()),
        }
        return out

    def stop(self) -> None:
        import shutil

        for proc in (self.creator, self.watcher):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


# -- the schedulers ----------------------------------------------------------------------------------------------


@dataclass
class Row:
    scheduler: str
    pods: int
    nodes: int
    bound: int
    create_seconds: float
    first_create_to_last_bind: float
    bind_phase: float
    pods_per_second: float
    bind_phase_pods_per_second: float
    latency_p50: float
    latency_p99: float
    latency_max: float
    client_limits: str
    notes: dict[str, Any] = field(default_factory=dict)


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _row(name: str, work: Workload, load: dict[str, Any], limits: str, notes: dict[str, Any]) -> Row:
    created: dict[str, list[float]] = load["create"]["created"]
    bound: dict[str, list[Any]] = load["watch"]["bound"]
    first_sent = min(v[0] for v in created.values())
    last_created = max(v[1] for v in created.values())
    binds = [v[0] for v in bound.values()]
    first_bind, last_bind = (min(binds), max(binds)) if binds else (first_sent, first_sent)
    latencies = [bound[k][0] - created[k][1] for k in bound if k in created]
    total = max(last_bind - first_sent, 1e-9)
    phase = max(last_bind - first_bind, 1e-9)
    stamps = sorted(s for s in load["watch"]["server_created"].values() if s)
    notes = {**notes, "create_failures": load["create"]["failures"][:5],
             "server_created_spread": [stamps[0], stamps[-1]] if stamps else []}  # fmt: skip
    return Row(
        scheduler=name, pods=work.pods, nodes=work.nodes, bound=len(bound),
        create_seconds=round(last_created - first_sent, 3),
        first_create_to_last_bind=round(total, 3), bind_phase=round(phase, 3),
        pods_per_second=round(len(bound) / total, 1), bind_phase_pods_per_second=round(len(bound) / phase, 1),
        latency_p50=round(_percentile(latencies, 0.5), 3), latency_p99=round(_percentile(latencies, 0.99), 3),
        latency_max=round(max(latencies, default=float("nan")), 3), client_limits=limits, notes=notes,
    )  # fmt: skip


def _control_plane(bins: Any) -> Any:
    from tests.support.kube_apiserver import ControlPlane

    # the bench's API server keeps more in flight than a test's (10,000 creates and bindings at once); a run's server
    # is thrown away, so it is not given the time to drain the adapter's watches when it stops (2 s, then killed)
    return ControlPlane(
        bins,
        stop_grace=2.0,
        apiserver_args=("--max-requests-inflight=2000", "--max-mutating-requests-inflight=1000"),
    )


def run_kube_scheduler(bins: Any, work: Workload, args: argparse.Namespace, log: Callable[[str], None]) -> Row:
    from tests.support.ports import free_port

    tag = uuid.uuid4().hex[:6]
    with _control_plane(bins) as plane:
        t0 = time.perf_counter()
        _register_nodes(plane, work.nodes, args.setup_threads)
        _setup_trees(plane, work, tag, fairway=False)
        log(f"kube-scheduler: {work.nodes} nodes registered in {time.perf_counter() - t0:.1f} s")
        assert plane.folder is not None
        config = plane.write_kubeconfig(plane.folder / "scheduler.kubeconfig")
        scheduler_log = plane.folder / "kube-scheduler.log"
        port = free_port()
        with scheduler_log.open("wb") as out:
            proc = subprocess.Popen([
                str(bins.kube_scheduler), f"--kubeconfig={config}", "--leader-elect=false",
                f"--kube-api-qps={args.kube_api_qps}", f"--kube-api-burst={args.kube_api_burst}",
                "--bind-address=127.0.0.1", f"--secure-port={port}", f"--cert-dir={plane.folder / 'scheduler-certs'}",
            ], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
            try:
                # /readyz (anonymous: an always-allowed path) is ok once the scheduler's informers have synced
                _until_ready(proc, f"https://127.0.0.1:{port}/readyz", scheduler_log, args.timeout)
                load = Load(plane, work.pods_of(tag, KUBE_SCHEDULER), tag, threads=args.create_threads,
                            timeout=args.timeout)  # fmt: skip
                try:
                    load.start()
                    result = load.finish()
                finally:
                    load.stop()
            finally:
                proc.terminate()
                proc.wait(10)
        limits = f"--kube-api-qps={args.kube_api_qps} --kube-api-burst={args.kube_api_burst}"
        return _row("kube-scheduler", work, result, limits, {})


def _until_ready(proc: subprocess.Popen[bytes], url: str, log: Path, timeout: float) -> None:
    import ssl
    import urllib.error
    import urllib.request

    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # its own self-signed serving certificate
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"kube-scheduler exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        with (
            contextlib.suppress(OSError, urllib.error.URLError),
            urllib.request.urlopen(url, timeout=2, context=context) as response,
        ):
            if response.read().decode().strip() == "ok":
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"kube-scheduler was not ready at {url} within {timeout:g} s")
        time.sleep(0.1)


class FairwayLoop:
    """Fairway as the product runs it: the adapter's own loop (``Adapter.run``: a pass, mirror in and send, whenever
    an informer's cache changes, at most ``interval`` apart) in a thread, as ``manage.py kube_adapter`` runs it in a
    process; and the scheduling sessions (``scheduling.tasks.run_session``) every ``period`` seconds in the caller's
    thread, as Celery beat sends them to a worker (one a second; a session that takes longer is followed at once by
    the next). Times the adapter's passes and the sessions."""

    def __init__(self, adapter: Any, cluster_id: int, interval: float, period: float) -> None:
        self.adapter, self.cluster_id, self.interval, self.period = adapter, cluster_id, interval, period
        self.timings: dict[str, float] = {"adapter passes": 0.0, "sessions": 0.0}
        self.passes = self.sessions = 0
        self.sent: dict[str, int] = {}
        self.problems: list[str] = []
        self.thread: threading.Thread | None = None
        self.profile: cProfile.Profile | None = None
        self._profiling = False
        self.in_pass = threading.Lock()  # held by the adapter's thread during a pass
        reconcile = adapter.reconcile

        def timed(**kwargs: Any) -> Any:  # the adapter's pass, timed, and what it sent added up
            if self.profile is not None and not self._profiling:  # enabled in the adapter's thread, once asked
                self.profile.enable()
                self._profiling = True
            with self.in_pass:
                t0 = time.perf_counter()
                out = reconcile(**kwargs)
                self.timings["adapter passes"] += time.perf_counter() - t0
            self.passes += 1
            for k, v in ((out or {}).get("sent") or {}).items():
                self.sent[k] = self.sent.get(k, 0) + v
            self.problems.extend(p for p in (out or {}).get("problems") or [] if p not in self.problems)
            return out

        adapter.reconcile = timed

    def start(self) -> None:
        def body() -> None:
            from django.db import connection

            try:
                self.adapter.run(interval=self.interval)
            finally:
                if self.profile is not None and self._profiling:
                    self.profile.disable()
                connection.close()

        self.thread = threading.Thread(target=body, name="kube-adapter", daemon=True)
        self.thread.start()

    def session(self) -> None:
        from django.db import close_old_connections

        from scheduling.tasks import run_session

        close_old_connections()
        t0 = time.perf_counter()
        outcome = run_session(self.cluster_id)
        self.timings["sessions"] += time.perf_counter() - t0
        self.sessions += outcome == "ran"

    def sessions_while(self, running: Callable[[], bool], deadline: float) -> None:
        next_at = time.monotonic()
        while running() and time.monotonic() < deadline:
            time.sleep(max(0.0, next_at - time.monotonic()))
            next_at = time.monotonic() + self.period
            self.session()

    def stop(self, before_join: Callable[[], None]) -> None:
        """Let the adapter's pass under way end (it sends what the last session decided), then ``before_join``
        (the server stopped: the informers' watches end with it at once), then wait for the thread."""
        self.adapter.stop.set()
        if self.in_pass.acquire(timeout=120):
            self.in_pass.release()
        before_join()
        if self.thread is not None:
            self.thread.join(30)


def run_fairway(bins: Any, work: Workload, args: argparse.Namespace, log: Callable[[str], None], name: str) -> Row:
    from scheduling.kube.adapter import Adapter
    from scheduling.models import Cluster

    tag = uuid.uuid4().hex[:6]
    cluster = None
    with _control_plane(bins) as plane:
        t0 = time.perf_counter()
        _register_nodes(plane, work.nodes, args.setup_threads)
        _setup_trees(plane, work, tag, fairway=True)
        log(f"{name}: {work.nodes} nodes registered in {time.perf_counter() - t0:.1f} s")
        from quotas import services

        services.ensure_builtins()
        cluster = Cluster.objects.create(name=f"bench-{tag}", source="kubernetes", kubeconfig=plane.kubeconfig(),
                                         scheduler_name=f"fairway-{tag}", tree_source="kubernetes")  # fmt: skip
        adapter = Adapter(cluster, identity=f"bench-{tag}", lease_namespace="kube-system", lease_seconds=30.0,
                          renew_seconds=10.0, watch_seconds=300)  # fmt: skip
        loop = FairwayLoop(adapter, cluster.pk, args.interval, args.session_period)
        try:
            loop.start()
            # the nodes, queues and podgroups mirrored before the first pod, as a running adapter has them
            _until(lambda: loop.passes > 0 and adapter.synced(), 120, "the adapter's first pass")
            loop.session()
            loop.timings = dict.fromkeys(loop.timings, 0.0)
            loop.passes = loop.sessions = 0
            loop.sent, loop.problems = {}, []
            if args.profile:
                loop.profile = cProfile.Profile()  # the adapter's thread (the main thread's sessions are timed)
            load = Load(plane, work.pods_of(tag, cluster.scheduler_name), tag, threads=args.create_threads,
                        timeout=args.timeout)  # fmt: skip
            try:
                load.start()
                loop.sessions_while(load.running, time.monotonic() + args.timeout)
                result = load.finish()
            finally:
                load.stop()
        finally:
            loop.stop(before_join=plane.stop)
            if cluster is not None and not args.keep:
                _drop_cluster(cluster)
    notes: dict[str, Any] = {"adapter_passes": loop.passes, "sessions": loop.sessions, "sent": loop.sent,
                             "seconds": {k: round(v, 2) for k, v in loop.timings.items()},
                             "problems": loop.problems[:5]}  # fmt: skip
    if loop.profile is not None:
        text = io.StringIO()
        pstats.Stats(loop.profile, stream=text).sort_stats("cumulative").print_stats(40)
        notes["profile"] = text.getvalue()
    limits = f"none (Python client, no rate limiter); bindings {_binding_concurrency()} at a time"
    return _row(name, work, result, limits, notes)


def _binding_concurrency() -> int:
    from scheduling.kube.client import CONCURRENT_CALLS

    return CONCURRENT_CALLS


def _drop_cluster(cluster: Any) -> None:
    from scheduling.models import Cluster

    Cluster.objects.filter(pk=cluster.pk).delete()


def _until(check: Callable[[], Any], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)


# -- the run -----------------------------------------------------------------------------------------------------


def ensure_database() -> None:
    """Fairway's database: created when missing (PostgreSQL), then migrated."""
    import environ

    config = environ.Env.db_url_config(os.environ["DATABASE_URL"])
    if config["ENGINE"] == "django.db.backends.postgresql":
        import psycopg

        with psycopg.connect(dbname="postgres", user=config["USER"], password=config.get("PASSWORD") or None,
                             host=config["HOST"], port=config["PORT"] or 5432, autocommit=True) as conn:  # fmt: skip
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [config["NAME"]]).fetchone() is None:
                conn.execute(f'CREATE DATABASE "{config["NAME"]}"')
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=1000)
    p.add_argument("--pods", type=int, default=10_000)
    p.add_argument("--namespaces", type=int, default=4, help="namespaces, each mapped to a queue of its own")
    p.add_argument("--gang", type=int, default=8, help="members of a gang in the gangs+quotas run")
    p.add_argument(
        "--schedulers",
        default="fairway,kube-scheduler,fairway-gangs",
        help="which runs, in order (comma-separated: fairway, kube-scheduler, fairway-gangs)",
    )
    p.add_argument("--create-threads", type=int, default=16, help="threads creating pods (keep-alive each)")
    p.add_argument("--setup-threads", type=int, default=8, help="threads registering nodes")
    p.add_argument("--kube-api-qps", type=int, default=5000)
    p.add_argument("--kube-api-burst", type=int, default=10000)
    p.add_argument(
        "--interval",
        type=float,
        default=1.0,
        help="Fairway's adapter passes at least this often, and whenever a cache changes (s; Adapter.run's default)",
    )
    p.add_argument(
        "--session-period",
        type=float,
        default=1.0,
        help="a scheduling session this often (s; Celery beat sends one a second per cluster)",
    )
    p.add_argument("--timeout", type=float, default=1800.0, help="give up on a run after this long (s)")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.add_argument("--profile", action="store_true", help="cProfile Fairway's loop (printed with --json)")
    p.add_argument("--keep", action="store_true", help="keep Fairway's cluster rows")
    p.add_argument("--child", choices=("create", "watch"), help=argparse.SUPPRESS)
    p.add_argument("--spec", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    return p


def table(rows: list[Row]) -> str:
    head = ("scheduler", "pods", "nodes", "bound", "pods/s (create→last bind)", "pods/s (bind phase)",
            "latency p50 s", "latency p99 s", "client limits")  # fmt: skip
    lines = [head] + [(r.scheduler, str(r.pods), str(r.nodes), str(r.bound), f"{r.pods_per_second:.0f}",
                       f"{r.bind_phase_pods_per_second:.0f}", f"{r.latency_p50:.2f}", f"{r.latency_p99:.2f}",
                       r.client_limits) for r in rows]  # fmt: skip
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines)


def run(argv: list[str] | None = None, *, log: Callable[[str], None] | None = None) -> list[Row]:
    """The runs of ``argv`` (Django must be set up, its database migrated); returns one row per run."""
    from tests.support.kube_apiserver import binaries

    args = parser().parse_args(argv)
    say = log or (lambda text: print(text, file=sys.stderr, flush=True))
    bins = binaries()
    missing = [p for p in (*bins.missing(), bins.kube_scheduler) if not os.access(p, os.X_OK)]
    if missing:
        raise SystemExit(f"not built: {', '.join(map(str, missing))} (make kube-tools builds them)")
    rows = []
    for name in [s.strip() for s in args.schedulers.split(",") if s.strip()]:
        if name == "kube-scheduler":
            work = Workload(args.nodes, args.pods, args.namespaces, 0, False)
            rows.append(run_kube_scheduler(bins, work, args, say))
        elif name == "fairway":
            work = Workload(args.nodes, args.pods, args.namespaces, 0, False)
            rows.append(run_fairway(bins, work, args, say, "fairway"))
        elif name == "fairway-gangs":
            work = Workload(args.nodes, args.pods, args.namespaces, args.gang, True)
            rows.append(run_fairway(bins, work, args, say, "fairway gangs+quotas"))
        else:
            raise SystemExit(f"--schedulers: unknown run {name!r} (fairway, kube-scheduler, fairway-gangs)")
        say(f"{rows[-1].scheduler}: {rows[-1].bound}/{rows[-1].pods} bound, {rows[-1].pods_per_second:.0f} pods/s")
    return rows


@contextlib.contextmanager
def _quiet_logs() -> Iterator[None]:
    import logging

    # the problems are in the rows' notes; the informers' watches, cut when a run's server stops, are not news
    logging.getLogger("scheduling").setLevel(logging.ERROR)
    logging.getLogger("urllib3").setLevel(logging.ERROR)  # the lease given back after the server stopped
    yield


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.child == "create":
        child_create(args.spec, args.out)
        return 0
    if args.child == "watch":
        child_watch(args.spec, args.out)
        return 0
    os.environ.setdefault("DATABASE_URL", DEFAULT_DATABASE)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
    os.environ.setdefault("STATICFILES_STORAGE", "django.contrib.staticfiles.storage.StaticFilesStorage")
    ensure_database()
    with _quiet_logs():
        rows = run(argv)
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
    else:
        print(table(rows))
        for r in rows:
            print(
                f"{r.scheduler}: created in {r.create_seconds:.1f} s, first create → last bind "
                f"{r.first_create_to_last_bind:.1f} s, bind phase {r.bind_phase:.1f} s, latency max "
                f"{r.latency_max:.2f} s; {json.dumps({k: v for k, v in r.notes.items() if k != 'profile'})}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
