"""Fuzzing ``fairway simulate`` with mutated manifests (issue 9, item 4).

The seeds are the acceptance manifests (built with ``tests/acceptance/manifests.py`` as the acceptance tests build
theirs) and, when they are beside the repository, the peers' manifests of ``shared/fixtures/manifests``. Each is
mutated (truncated, keys duplicated, values of the wrong type, huge numbers, deep nesting, bytes that are not UTF-8,
replicas and alias bombs, flipped bytes, another kind) with a fixed seed, and the CLI runs on it in a subprocess
under a memory limit and a timeout (``simulate_runner``). Every run must end with exit 0 or 2, one line on stderr
for exit 2, no traceback, no signal, within the time and memory budgets.

``FAIRWAY_FUZZ_CASES`` (default 40) sets how many mutated inputs one run tries; ``FAIRWAY_FUZZ_SEED`` the seed.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.acceptance import manifests as m
from tests.acceptance.manifests import PEER_MANIFESTS
from tests.acceptance.simulate_runner import Run, problems, run_simulate

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("FAIRWAY_FUZZ_SEED", "20261125"))
CASES = int(os.environ.get("FAIRWAY_FUZZ_CASES", "40"))

POLICY = """actions: "enqueue, allocate, backfill, reclaim, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
    enableNamespaceOrder: true
  - name: predicates
  - name: capacity
    enableHierarchy: true
  - name: elasticquota
    arguments: {monitorAllQuotas: true, delayEvictTime: 0s}
  - name: nodeorder
"""

VCJOB = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: train, namespace: team-a}
spec:
  minAvailable: 3
  queue: a
  priorityClassName: high
  tasks:
  - name: ps
    replicas: 1
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1", memory: 2Gi}}}]}}
  - name: worker
    replicas: 4
    minAvailable: 2
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "2", memory: 4Gi}}}]}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
data:
  volcano-scheduler.conf: |
""" + "".join(f"    {line}\n" for line in POLICY.splitlines())


def acceptance_manifests() -> dict[str, str]:
    """The shapes the acceptance tests feed simulate: seed 000 (queues, weighted namespaces, gangs), seed 001
    (an elastic quota tree with labelled pods), seed 004 (a queue hierarchy with guarantees), a vcjob with its
    priority class and the scheduler ConfigMap."""
    seed000: list[object] = [m.node("n1", cpu="16", memory="64Gi"), m.queue("q1", 1), m.queue("q2", 3)]
    for ns, q, weight in (("ns1", "q1", 1), ("ns2", "q1", 2), ("ns3", "q2", 1)):
        seed000 += m.namespace(ns, weight)
        seed000.append(m.podgroup(ns, f"{ns}-job", q, min_member=2))
        seed000 += [m.pod(ns, f"{ns}-job-{i}", group=f"{ns}-job", cpu="1", memory="1Gi") for i in range(4)]
    seed001: list[object] = [m.node("n1", cpu="100")]
    for name, low, high in (("a", "10", "40"), ("b", "15", "60"), ("c", "20", "50")):
        seed001.append(m.elastic_quota(name, min={"cpu": low}, max={"cpu": high}, shared_weight={"cpu": high}))
        seed001 += [m.pod("default", f"{name}-{i}", quota=name, cpu="5") for i in range(6)]
    seed004: list[object] = [m.node("n1", cpu="12", memory="24Gi"), m.node("n2", cpu="12", memory="24Gi")]
    seed004.append(
        m.queue("eng", 2, capability={"cpu": "20"}, deserved={"cpu": "12"}, guarantee={"resource": {"cpu": "4"}})
    )
    seed004 += [m.queue("team-a", 1, parent="eng", deserved={"cpu": "6"}), m.queue("team-b", 1, parent="eng")]
    seed004.append(m.podgroup("default", "pg-a", "team-a", min_member=1))
    seed004 += [m.pod("default", f"a-{i}", group="pg-a", cpu="2", node_name="n1" if i < 2 else None) for i in range(4)]
    return {
        "seed000.yaml": m.dump(*seed000),
        "seed001.yaml": m.dump(*seed001),
        "seed004.yaml": m.dump(*seed004),
        "vcjob.yaml": m.dump(m.queue("a", 1), *m.namespace("team-a", 2), m.node("n1", cpu="8", memory="32Gi"))
        + "---\n"
        + VCJOB,
        "policy.conf": POLICY,
    }


def peer_manifests() -> dict[str, str]:
    if not PEER_MANIFESTS.is_dir():
        return {}
    return {
        str(p.relative_to(PEER_MANIFESTS)): p.read_text(encoding="utf-8", errors="surrogateescape")
        for p in sorted(PEER_MANIFESTS.rglob("*"))
        if p.is_file() and p.suffix in (".yaml", ".yml", ".conf")
    }


# -- mutations: (rng, text as bytes) -> bytes ------------------------------------------------------------------------
_KEY_LINE = re.compile(rb"^( *)(- )?([A-Za-z][\w.\-/]*): *(\S.*)?$", re.MULTILINE)
_NUMBER = re.compile(rb"(?<=: )(['\"]?)-?\d+(\.\d+)?([eE][+-]?\d+)?([a-zA-Z]{0,2})\1(?=\s*$)", re.MULTILINE)


def _lines(data: bytes) -> list[re.Match[bytes]]:
    return list(_KEY_LINE.finditer(data))


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data) or 1)]


def duplicate_keys(rng: random.Random, data: bytes) -> bytes:
    lines = _lines(data)
    if not lines:
        return data + b"\nkind: Node\nkind: Queue\n"
    line = rng.choice(lines)
    indent, dash = line.group(1), line.group(2) or b""
    dup = indent + b" " * len(dash) + line.group(3) + b": " + rng.choice([b"other", b"7", b"[]", b"{}"])
    return data[: line.end()] + b"\n" + dup + data[line.end() :]


def wrong_type(rng: random.Random, data: bytes) -> bytes:
    lines = [line for line in _lines(data) if line.group(4)]
    if not lines:
        return b"- " + data
    line = rng.choice(lines)
    value = rng.choice(
        [b"[]", b"{}", b"true", b"null", b"[1, 2]", b"{a: b}", b"3.5", b"-7", b'"text"', b"~", b"!!binary AA=="]
    )
    return data[: line.start(4)] + value + data[line.end(4) :]


def huge_number(rng: random.Random, data: bytes) -> bytes:
    value = rng.choice([b"1e999999999", b"9" * 5000, b"-1", b"1e308", b"99999999999999999999", b'"1e999999999Ki"',
                        b"0.0000000001", b"1e-999999999", b".inf", b".nan"])  # fmt: skip
    numbers = list(_NUMBER.finditer(data))
    if not numbers:
        return wrong_type(rng, data)
    hit = rng.choice(numbers)
    return data[: hit.start()] + value + data[hit.end() :]


def deep_nesting(rng: random.Random, data: bytes) -> bytes:
    depth = rng.choice([70, 1_000, 100_000])
    bomb = rng.choice([b"[" * depth + b"]" * depth, b"{a: " * depth + b"1" + b"}" * depth])
    lines = [line for line in _lines(data) if line.group(4)]
    if lines and rng.random() < 0.7:
        line = rng.choice(lines)
        return data[: line.start(4)] + bomb + data[line.end(4) :]
    if rng.random() < 0.5:
        return data + b"\n---\n" + b"- " * depth + b"x\n"
    return data + b"\n---\nkind: Pod\nmetadata: " + bomb + b"\n"


def non_utf8(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice([b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\x80abc"]) + data[at:]


def replicas_bomb(rng: random.Random, data: bytes) -> bytes:
    counts = list(re.finditer(rb"(?<=(replicas|inMember|vailable): )\d+", data))
    if counts and rng.random() < 0.6:
        hit = rng.choice(counts)
        return data[: hit.start()] + b"3000000" + data[hit.end() :]
    bomb = VCJOB.split("---")[0].replace("replicas: 4", "replicas: 3000000").encode()
    return data + b"\n---\n" + bomb


def alias_bomb(rng: random.Random, data: bytes) -> bytes:
    laughs = [b"a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    laughs += [b"a%d: &a%d [" % (i, i) + b", ".join([b"*a%d" % (i - 1)] * 10) + b"]" for i in range(1, 9)]
    doc = b"\n".join(laughs) if rng.random() < 0.7 else b"kind: Pod\nmetadata: &m {name: p, labels: *m}"
    return data + b"\n---\n" + doc + b"\n"


def byte_flip(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if out:
            out[rng.randrange(len(out))] = rng.choice(b"\x00\t\n\r :-[]{}#&*!|>'\"%@`\x7f")
    return bytes(out)


def another_kind(rng: random.Random, data: bytes) -> bytes:
    kinds = [b"Node", b"Pod", b"Queue", b"PodGroup", b"ElasticQuota", b"Namespace", b"ResourceQuota", b"Job",
             b"ConfigMap", b"PriorityClass", b"List", b"KubeSchedulerConfiguration"]  # fmt: skip
    hits = list(re.finditer(rb"(?<=kind: )\w+", data))
    if not hits:
        return b"kind: " + rng.choice(kinds) + b"\n" + data
    hit = rng.choice(hits)
    return data[: hit.start()] + rng.choice(kinds) + data[hit.end() :]


MUTATIONS: dict[str, Callable[[random.Random, bytes], bytes]] = {
    f.__name__: f
    for f in (
        truncate,
        duplicate_keys,
        wrong_type,
        huge_number,
        deep_nesting,
        non_utf8,
        replicas_bomb,
        alias_bomb,
        byte_flip,
        another_kind,
    )
}
BASE = m.dump(m.node("base", cpu="4", memory="8Gi"))


def _cases(seeds: dict[str, str], rng: random.Random, count: int) -> list[tuple[str, str, bytes, bool]]:
    """(seed name, mutation, mutated bytes, is a policy) for ``count`` (seed, mutation) pairs drawn without repeats."""
    pairs = [(name, mutation) for name in sorted(seeds) for mutation in MUTATIONS]
    rng.shuffle(pairs)
    out = []
    for name, mutation in pairs[:count]:
        data = seeds[name].encode("utf-8", "surrogateescape")
        out.append((name, mutation, MUTATIONS[mutation](rng, data), name.endswith(".conf")))
    return out


def _run_case(tmp: Path, index: int, case: tuple[str, str, bytes, bool]) -> tuple[str, Run]:
    name, mutation, data, is_policy = case
    target = tmp / f"case{index:03d}-{mutation}{'.conf' if is_policy else '.yaml'}"
    target.write_bytes(data)
    if is_policy:
        base = tmp / f"case{index:03d}-base.yaml"
        base.write_text(BASE)
        args = ["-f", str(base), "--policy", str(target)]
    else:
        args = ["-f", str(target), "-o", "json"]
    if index % 3 == 0:
        args += ["--sessions", "3", "--recycle"]
    return f"{name} / {mutation} ({target.name})", run_simulate(args)


def _fuzz(tmp_path: Path, seeds: dict[str, str], count: int) -> None:
    rng = random.Random(SEED)
    cases = _cases(seeds, rng, count)
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda ic: _run_case(tmp_path, *ic), enumerate(cases)))
    failures = [f"{label}: {'; '.join(found)}" for label, run in results if (found := problems(run))]
    assert not failures, f"{len(failures)} of {len(results)} runs went wrong (inputs in {tmp_path}):\n" + "\n".join(
        failures
    )
    codes = sorted({run.code for _, run in results})
    assert set(codes) <= {0, 2}


def test_mutated_acceptance_manifests(tmp_path: Path) -> None:
    _fuzz(tmp_path, acceptance_manifests(), CASES // 2)


@pytest.mark.skipif(
    not PEER_MANIFESTS.is_dir(),
    reason=f"the peers' manifests are absent ({PEER_MANIFESTS}): they live beside the repository, not in it",
)
def test_mutated_peer_manifests(tmp_path: Path) -> None:
    _fuzz(tmp_path, peer_manifests(), CASES - CASES // 2)


def test_the_verdict_catches_what_the_issue_saw() -> None:
    """The judge of a run: a segfault, a traceback, an exit 1, a run over memory or time, two error lines."""
    ok = Run(
        code=2, stdout="", stderr="warning: skipped\nf.yaml: document 1: bad\n", peak_rss=10, seconds=1, timed_out=False
    )
    assert problems(ok) == []
    crashed = Run(code=-11, stdout="", stderr="", peak_rss=10, seconds=1, timed_out=False)
    assert problems(crashed) == ["killed by signal 11"]
    traceback = "Traceback (most recent call last):\n  ...\nValueError: Exceeds the limit (4300 digits)\n"
    broken = Run(code=1, stdout="", stderr=traceback, peak_rss=7 * 2**30, seconds=1, timed_out=True)
    assert len(problems(broken)) == 4  # time, exit code, traceback, memory
    chatty = Run(code=2, stdout="", stderr="one\ntwo\n", peak_rss=10, seconds=1, timed_out=False)
    assert problems(chatty) == ["exit 2 with 2 error lines instead of one: ['one', 'two']"]
