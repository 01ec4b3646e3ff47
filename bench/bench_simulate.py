"""Benchmark of ``fairway simulate`` on a large Koordinator cluster: prints figures, asserts nothing.

Workload (deterministic, seed 7): a Koordinator ElasticQuota tree of depth 4 below the root (10 x 10 x 10 x 9:
10,110 groups, min/max in cpu, memory, nvidia.com/gpu and pods, some shared weights, some not lending), 200 nodes,
20,000 pending pods (half in 2,500 PodGroups of 4, half standalone, each labelled with its leaf quota), a
``volcano-scheduler-configmap`` that runs Koordinator's elasticquota plugin beside Volcano's default plugins, and a
few PriorityClasses and Namespaces: about 12 MB of YAML, written to a temporary file (or ``--keep FILE``).

Figures:

* ``parse floor``: PyYAML's C loader (``yaml.load_all(text, Loader=yaml.CSafeLoader)``) on the same file, in
  this run: the time every YAML-reading tool pays just to have the objects;
* ``whole process``: ``fairway simulate -f FILE -o json`` run as a child process (the interpreter's start, the
  imports, reading, the sessions, the JSON on stdout), wall clock, median of ``--runs``;
* the ratio, and the target ``whole <= 1.5 x parse + 0.5 s``;
* a phase split of one run inside this process (parse, manifest build, values + session, document, JSON dump),
  the same code the command runs, timed by ``time.perf_counter``.

Run: ``.venv/bin/python bench/bench_simulate.py [--runs N] [--keep FILE] [--profile]``
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import math
import os
import pstats
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import yaml

GI = 2**30
FANOUTS = (10, 10, 10, 9)
NODES = 200
PODS = 20_000
GANG = 4
GROUPS = sum(math.prod(FANOUTS[: i + 1]) for i in range(len(FANOUTS)))  # 10,110
POLICY = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: elasticquota
"""


def _q(amount: int, unit: str) -> str:
    return f"{amount}{unit}"


def _rl(cpu_m: int, mem_gi: int, gpu: int, pods: int) -> dict[str, str]:
    out = {"cpu": f"{cpu_m // 1000}" if cpu_m % 1000 == 0 else f"{cpu_m}m", "memory": f"{mem_gi}Gi", "pods": str(pods)}
    if gpu:
        out["nvidia.com/gpu"] = str(gpu)
    return out


def make_manifest(seed: int = 7) -> str:
    """The benchmark's manifest as one multi-document YAML text."""
    rnd = random.Random(seed)
    docs: list[dict[str, object]] = []
    docs.append(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
            "data": {"volcano-scheduler.conf": POLICY},
        }
    )
    for name, value in (("high", 1000), ("normal", 100), ("low", 10)):
        docs.append(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
                "globalDefault": name == "normal",
            }
        )
    namespaces = [f"team-{i}" for i in range(100)]
    for ns in namespaces:
        docs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"team": ns}}})

    # nodes
    for n in range(NODES):
        gpus = 8 if n % 4 == 0 else 0
        node: dict[str, object] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"node-{n:03d}",
                "labels": {
                    "kubernetes.io/hostname": f"node-{n:03d}",
                    "topology.kubernetes.io/zone": f"zone-{n % 3}",
                    "node.kubernetes.io/instance-type": "gpu-8x" if gpus else "cpu-64",
                },
            },
            "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]} if gpus else {},
            "status": {
                "allocatable": _rl(64_000, 256, gpus, 110),
                "conditions": [{"type": "Ready", "status": "True"}],
            },
        }
        docs.append(node)

    # the quota tree (children first computed, so mins add up under every parent)
    quotas: list[dict[str, object]] = []
    leaves: list[str] = []

    def build(name: str, parent: str, depth: int) -> tuple[int, int, int, int]:
        if depth == len(FANOUTS):
            mn = (rnd.randint(1, 8) * 500, rnd.randint(1, 8), rnd.choice((0, 0, 0, 1)), rnd.randint(2, 10))
            leaves.append(name)
        else:
            sums = [0, 0, 0, 0]
            for k in range(FANOUTS[depth]):
                child = build(f"{name}-{k}", name, depth + 1)
                for i in range(4):
                    sums[i] += child[i]
            mn = (sums[0], sums[1], sums[2], sums[3])
        mx = tuple(v * rnd.randint(2, 3) for v in mn)
        labels = {
            "quota.scheduling.koordinator.sh/parent": parent,
            "quota.scheduling.koordinator.sh/is-parent": "true" if depth < len(FANOUTS) else "false",
        }
        if rnd.random() < 0.1:
            labels["quota.scheduling.koordinator.sh/allow-lent-resource"] = "false"
        annotations: dict[str, str] = {}
        if rnd.random() < 0.2:
            annotations["quota.scheduling.koordinator.sh/shared-weight"] = json.dumps(
                _rl(rnd.randint(1, 4) * 1000, rnd.randint(1, 4), rnd.randint(0, 2), rnd.randint(1, 4))
            )
        if depth == len(FANOUTS):
            annotations["quota.scheduling.koordinator.sh/namespaces"] = json.dumps([rnd.choice(namespaces)])
        meta: dict[str, object] = {"name": name, "namespace": "koordinator-system", "labels": labels}
        if annotations:
            meta["annotations"] = annotations
        quotas.append(
            {
                "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
                "kind": "ElasticQuota",
                "metadata": meta,
                "spec": {"min": _rl(*mn), "max": _rl(*mx)},
            }
        )
        return mn

    for k in range(FANOUTS[0]):
        build(f"q{k}", "koordinator-root-quota", 1)
    docs.extend(reversed(quotas))  # parents before their children, as an export would list them

    # pods: half in gangs of GANG (with a PodGroup), half standalone
    shapes = [
        (rnd.choice((250, 500, 1000, 2000)), rnd.choice((1, 2, 4, 8)), rnd.choice((0, 0, 0, 1))) for _ in range(24)
    ]
    gang_pods = PODS // 2
    pod_no = 0
    for g in range(gang_pods // GANG):
        ns = rnd.choice(namespaces)
        leaf = rnd.choice(leaves)
        cpu, mem, gpu = rnd.choice(shapes)
        pg = f"job-{g:05d}"
        docs.append(
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": pg, "namespace": ns},
                "spec": {
                    "minMember": GANG,
                    "queue": "default",
                    "priorityClassName": rnd.choice(("high", "normal", "low")),
                },
                "status": {"phase": "Pending"},
            }
        )
        for t in range(GANG):
            docs.append(_pod(f"{pg}-{t}", ns, leaf, cpu, mem, gpu, pg, rnd))
            pod_no += 1
    while pod_no < PODS:
        ns = rnd.choice(namespaces)
        cpu, mem, gpu = rnd.choice(shapes)
        docs.append(_pod(f"solo-{pod_no:05d}", ns, rnd.choice(leaves), cpu, mem, gpu, None, rnd))
        pod_no += 1
    return yaml.dump_all(docs, Dumper=yaml.CSafeDumper, sort_keys=False)


def _pod(
    name: str, ns: str, leaf: str, cpu: int, mem: int, gpu: int, group: str | None, rnd: random.Random
) -> dict[str, object]:
    requests: dict[str, str] = {"cpu": f"{cpu}m", "memory": f"{mem}Gi"}
    limits: dict[str, str] = {"cpu": f"{cpu}m", "memory": f"{mem}Gi"}
    if gpu:
        requests["nvidia.com/gpu"] = limits["nvidia.com/gpu"] = str(gpu)
    annotations = {"scheduling.k8s.io/group-name": group} if group else {}
    meta: dict[str, object] = {
        "name": name,
        "namespace": ns,
        "labels": {"app": name.rsplit("-", 1)[0], "quota.scheduling.koordinator.sh/name": leaf},
        "creationTimestamp": "2026-11-25T10:00:00Z",
    }
    if annotations:
        meta["annotations"] = annotations
    spec: dict[str, object] = {
        "containers": [
            {"name": "main", "image": "registry.local/batch:1.0", "resources": {"requests": requests, "limits": limits}}
        ],
        "priorityClassName": rnd.choice(("high", "normal", "low")),
    }
    if gpu:
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {"phase": "Pending"}}


Clock = tuple[float, float]  # wall and CPU seconds


def _now() -> Clock:
    return time.perf_counter(), time.process_time()


def _since(start: Clock) -> Clock:
    wall, cpu = _now()
    return wall - start[0], cpu - start[1]


class _Timed:
    """Wraps a module's function, adding each call's wall and CPU seconds to ``phases[label]``."""

    def __init__(self, module: object, name: str, label: str, phases: dict[str, Clock]) -> None:
        self.module, self.name, self.label, self.phases = module, name, label, phases
        self.fn = getattr(module, name)

    def __enter__(self) -> None:
        fn, label, phases = self.fn, self.label, self.phases

        def wrapper(*args: object, **kwargs: object) -> object:
            start = _now()
            try:
                return fn(*args, **kwargs)
            finally:
                took = _since(start)
                wall, cpu = phases.get(label, (0.0, 0.0))
                phases[label] = (wall + took[0], cpu + took[1])

        setattr(self.module, self.name, wrapper)

    def __exit__(self, *exc: object) -> None:
        setattr(self.module, self.name, self.fn)


def phase_split(path: Path) -> dict[str, Clock]:
    """One run of what ``fairway simulate -o json`` does, phase by phase, in this process (with the command's
    collector settings): wall and CPU seconds of each."""
    import engine.manifests.builder as builder
    import engine.session.run as session_run
    import engine.simulate as simulate_module
    from controlplane.simulate_cli import _Collector, dump_json
    from engine.limits import Limits

    phases: dict[str, Clock] = {}
    collector = _Collector()
    try:
        start = _now()
        text = path.read_text(encoding="utf-8")
        phases["read"] = _since(start)
        limits = Limits.from_env()
        with (
            _Timed(builder, "_split_documents", "parse", phases),
            _Timed(simulate_module, "compute_values", "values", phases),
            _Timed(simulate_module, "_value_sections", "document", phases),
            _Timed(session_run, "run_session", "session", phases),
        ):
            start = _now()
            collector.reading()
            loaded = builder.load_manifests([(str(path), text)], limits=limits)
            collector.read()
            took = _since(start)
            phases["manifest build"] = (took[0] - phases["parse"][0], took[1] - phases["parse"][1])
            start = _now()
            result = simulate_module.simulate(loaded.snapshot, origins=loaded.origins, limits=limits)
            took = _since(start)
        rest = [took[k] - phases["session"][k] - phases["values"][k] - phases["document"][k] for k in (0, 1)]
        phases["simulate (rest)"] = (rest[0], rest[1])
        start = _now()
        dump_json(result.document)
        phases["JSON dump"] = _since(start)
    finally:
        collector.restore()
    return phases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="whole-process runs (median reported)")
    ap.add_argument("--keep", metavar="FILE", help="write the manifest here (and reuse it if it exists)")
    ap.add_argument("--profile", action="store_true", help="print cProfile's top functions of one in-process run")
    args = ap.parse_args()

    if args.keep and Path(args.keep).exists():
        path = Path(args.keep)
    else:
        text = make_manifest()
        if args.keep:
            path = Path(args.keep)
        else:
            fd, name = tempfile.mkstemp(suffix=".yaml", prefix="bench_simulate_")
            os.close(fd)
            path = Path(name)
        path.write_text(text, encoding="utf-8")
    size = path.stat().st_size
    print(
        f"manifest: {path} ({size / 1e6:.1f} MB): {GROUPS:,} groups, "
        f"{NODES} nodes, {PODS} pending pods; load average {os.getloadavg()[0]:.2f} (2 cores)"
    )

    parse_times, whole_times = [], []  # (wall, CPU) seconds of each run
    command = [sys.executable, "-m", "controlplane.cli", "simulate", "-f", str(path), "-o", "json"]
    root = Path(__file__).resolve().parents[1]
    for _ in range(args.runs):
        text = path.read_text(encoding="utf-8")
        start = _now()
        for _doc in yaml.load_all(text, Loader=yaml.CSafeLoader):
            pass
        parse_times.append(_since(start))
        del text
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.perf_counter()
        done = subprocess.run(command, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        whole_times.append((time.perf_counter() - wall, cpu))
        if done.returncode != 0:
            sys.exit(f"fairway simulate failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    for k, clock in ((0, "wall"), (1, "CPU")):
        parse = statistics.median(t[k] for t in parse_times)
        whole = statistics.median(t[k] for t in whole_times)
        target = 1.5 * parse + 0.5
        print(
            f"{clock:4}: parse floor (PyYAML CSafeLoader) {parse:.2f} s, whole process (fairway simulate -o json) "
            f"{whole:.2f} s (medians; runs {', '.join(f'{t[k]:.2f}' for t in whole_times)}); ratio {whole / parse:.2f}; "
            f"target 1.5 x parse + 0.5 s = {target:.2f} s: {'met' if whole <= target else 'not met'}"
        )
        # pair by pair (each run's parse right before its whole process): robust when the machine's speed drifts
        margins = [w[k] - (1.5 * p[k] + 0.5) for p, w in zip(parse_times, whole_times, strict=True)]
        ratios = [w[k] / p[k] for p, w in zip(parse_times, whole_times, strict=True)]
        print(
            f"      pair by pair: ratio median {statistics.median(ratios):.2f} (min {min(ratios):.2f}, max "
            f"{max(ratios):.2f}); whole minus target median {statistics.median(margins):+.2f} s; "
            f"met in {sum(m <= 0 for m in margins)} of {len(margins)} pairs"
        )
    print(f"load average after the runs: {os.getloadavg()[0]:.2f}")

    phases = phase_split(path)
    print("phase split (one in-process run):   wall s    CPU s")
    for label, (wall, cpu) in phases.items():
        print(f"  {label:32} {wall:7.3f}  {cpu:7.3f}")
    total = [sum(v[k] for v in phases.values()) for k in (0, 1)]
    print(f"  {'total':32} {total[0]:7.3f}  {total[1]:7.3f}")

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        phase_split(path)
        profiler.disable()
        stream = io.StringIO()
        pstats.Stats(profiler, stream=stream).sort_stats("cumulative").print_stats(40)
        print(stream.getvalue())
    if not args.keep:
        path.unlink()


if __name__ == "__main__":
    main()
