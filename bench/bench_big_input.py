"""Benchmark of ``fairway simulate`` on a real cluster's size: prints figures, asserts nothing.

One cluster (deterministic, seed 11): 5,000 nodes (64 cores, 256 GiB, 110 pods; 5 % with 8 GPUs and a taint), 50,000
pods in 40 namespaces and 20 Volcano queues: about 28,000 Running on the nodes, the rest Pending; 18,000 of them in 3,000
Volcano PodGroups of 6 (``scheduling.k8s.io/group-name``), the other 32,000 without a PodGroup (each its own). It is
written twice, as two files of the same objects:

* ``lean.yaml``: multi-document YAML of only the fields Fairway reads (``lean_of``: names, labels, annotations,
  requests, tolerations, priorities, node names, phases, allocatable, taints, the Ready condition): about 21 MB;
* ``full.yaml``: what ``kubectl get nodes,pods,podgroups,queues,namespaces -A -o yaml`` prints for such a cluster, one
  ``kind: List`` with ``items``: nodes with their full status (conditions, addresses, daemonEndpoints, 12 images,
  nodeInfo, capacity), pods with ``managedFields`` (the controller's and the kubelet's), ``status.conditions``,
  ``containerStatuses``, IPs, QoS, and the service-account volume every pod has: about 100 MB.

For each file the command ``fairway simulate -f FILE -o json`` runs as a child process: wall time and its peak RSS
(``os.wait4``), and the two JSON outputs are compared (they must be equal: the dump holds the same cluster).

Run: ``.venv/bin/python bench/bench_big_input.py [--nodes N] [--pods N] [--dir DIR] [--only lean|full]``
(``--write-only`` writes the files and stops).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
ZONES = ("eu-west-1a", "eu-west-1b", "eu-west-1c")
GANG = 6
T0 = "2026-11-20T08:00:00Z"
IMAGES = [f"registry.example.com/team-{i}/trainer:v1.{i}.{i * 7 % 10}" for i in range(12)]


def _uid(*parts: object) -> str:
    h = hashlib.md5("/".join(map(str, parts)).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _stamp(rnd: random.Random) -> str:
    return (
        f"2026-11-{rnd.randint(1, 19):02d}T{rnd.randint(0, 23):02d}:{rnd.randint(0, 59):02d}:{rnd.randint(0, 59):02d}Z"
    )


def _fields(*paths: str) -> dict[str, Any]:
    """A ``fieldsV1`` tree of the given ``|``-separated paths, as the API server writes it (``f:`` and ``k:`` keys,
    ``.: {}`` on the maps set as a whole, ``{}`` leaves)."""
    tree: dict[str, Any] = {}
    for path in paths:
        node = tree
        parts = path.split("|")
        for depth, part in enumerate(parts):
            node = node.setdefault(part, {})
            if depth < len(parts) - 1:
                node.setdefault(".", {})
    return tree


NODE_FIELDS = _fields(
    "f:metadata|f:annotations|f:node.alpha.kubernetes.io/ttl",
    "f:metadata|f:labels|f:kubernetes.io/hostname",
    "f:spec|f:podCIDR",
    "f:spec|f:providerID",
)
NODE_STATUS_FIELDS = _fields(
    'f:status|f:conditions|k:{"type":"DiskPressure"}|f:lastHeartbeatTime',
    'f:status|f:conditions|k:{"type":"MemoryPressure"}|f:lastHeartbeatTime',
    'f:status|f:conditions|k:{"type":"PIDPressure"}|f:lastHeartbeatTime',
    'f:status|f:conditions|k:{"type":"Ready"}|f:lastHeartbeatTime',
    "f:status|f:images",
    "f:status|f:nodeInfo|f:bootID",
)
POD_FIELDS = _fields(
    "f:metadata|f:annotations|f:scheduling.k8s.io/group-name",
    "f:metadata|f:labels|f:app",
    'f:metadata|f:ownerReferences|k:{"uid":"x"}',
    'f:spec|f:containers|k:{"name":"main"}|f:image',
    'f:spec|f:containers|k:{"name":"main"}|f:resources|f:requests|f:cpu',
    'f:spec|f:containers|k:{"name":"main"}|f:resources|f:requests|f:memory',
    "f:spec|f:dnsPolicy",
    "f:spec|f:restartPolicy",
    "f:spec|f:schedulerName",
)
POD_STATUS_FIELDS = _fields(
    'f:status|f:conditions|k:{"type":"ContainersReady"}|f:status',
    'f:status|f:conditions|k:{"type":"Initialized"}|f:status',
    'f:status|f:conditions|k:{"type":"Ready"}|f:status',
    "f:status|f:containerStatuses",
    "f:status|f:hostIP",
    "f:status|f:phase",
    "f:status|f:podIP",
    "f:status|f:startTime",
)


def _node_name(i: int) -> str:
    return f"ip-10-{i // 250}-{i % 250}-{(i * 7) % 250}.eu-west-1.compute.internal"


def _node_ip(i: int) -> str:
    return f"10.{i // 250}.{i % 250}.{(i * 7) % 250}"


class Cluster:
    """The cluster's objects, each yielded as (lean, full) pairs of the same object."""

    def __init__(self, nodes: int, pods: int, seed: int = 11) -> None:
        self.nodes, self.pods, self.seed = nodes, pods, seed
        self.queues = [f"team-{i:02d}" for i in range(20)]
        self.namespaces = [f"ns-{i:02d}" for i in range(40)]

    def objects(self) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        rnd = random.Random(self.seed)
        for i, q in enumerate(self.queues):
            spec = {"weight": 1 + i % 4, "reclaimable": True, "capability": {"cpu": str(self.nodes * 8)}}
            lean = {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "Queue",
                "metadata": {"name": q},
                "spec": spec,
            }
            full = {
                **lean,
                "metadata": {
                    "name": q,
                    "uid": _uid("q", q),
                    "resourceVersion": str(1000 + i),
                    "generation": 1,
                    "creationTimestamp": T0,
                },
                "status": {"state": "Open", "running": 0, "pending": 0, "allocated": {"cpu": "0", "memory": "0"}},
            }
            yield lean, full
        for i, ns in enumerate(self.namespaces):
            meta = {"name": ns, "annotations": {"scheduling.volcano.sh/queue-name": self.queues[i % len(self.queues)]}}
            lean = {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}
            full = {
                **lean,
                "metadata": {
                    **meta,
                    "uid": _uid("ns", ns),
                    "resourceVersion": str(2000 + i),
                    "creationTimestamp": T0,
                    "labels": {"kubernetes.io/metadata.name": ns},
                },
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }
            yield lean, full
        gpu_nodes = max(1, self.nodes // 20)
        for i in range(self.nodes):
            yield self._node(rnd, i, gpu=i < gpu_nodes)
        groups = min(self.pods // GANG, 3000)
        for g in range(groups):
            ns = self.namespaces[g % len(self.namespaces)]
            name = f"train-{g:05d}"
            spec = {
                "minMember": GANG,
                "queue": self.queues[g % len(self.queues)],
                "minResources": {"cpu": str(GANG * 2), "memory": f"{GANG * 8}Gi"},
            }
            lean = {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": name, "namespace": ns},
                "spec": spec,
            }
            full = {
                **lean,
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    "uid": _uid("pg", ns, name),
                    "generation": 1,
                    "resourceVersion": str(10_000 + g),
                    "creationTimestamp": T0,
                    "ownerReferences": [
                        {
                            "apiVersion": "batch.volcano.sh/v1alpha1",
                            "kind": "Job",
                            "name": name,
                            "uid": _uid("job", ns, name),
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "status": {
                    "phase": "Running",
                    "conditions": [
                        {
                            "type": "Scheduled",
                            "status": "True",
                            "lastTransitionTime": T0,
                            "reason": "tasks in gang are ready to be scheduled",
                            "transitionID": _uid("t", g),
                        }
                    ],
                },
            }
            yield lean, full
        for p in range(self.pods):
            yield self._pod(rnd, p, groups)

    def _node(self, rnd: random.Random, i: int, gpu: bool) -> tuple[dict[str, Any], dict[str, Any]]:
        name = _node_name(i)
        zone = ZONES[i % len(ZONES)]
        alloc = {"cpu": "63770m", "memory": "253900Mi", "pods": "110"}
        capacity = {
            "cpu": "64",
            "memory": "263586304Ki",
            "pods": "110",
            "ephemeral-storage": "209702892Ki",
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
        }
        if gpu:
            alloc["nvidia.com/gpu"] = capacity["nvidia.com/gpu"] = "8"
        labels = {
            "kubernetes.io/hostname": name,
            "topology.kubernetes.io/zone": zone,
            "node.kubernetes.io/instance-type": "p4d.24xlarge" if gpu else "m6i.16xlarge",
        }
        taints = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}] if gpu else []
        ready = {"type": "Ready", "status": "True"}
        lean_spec: dict[str, Any] = {"taints": taints} if taints else {}
        lean = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels},
            "spec": lean_spec,
            "status": {"allocatable": alloc, "conditions": [ready]},
        }
        stamp = _stamp(rnd)
        conditions = [
            {
                "type": kind,
                "status": "False",
                "reason": f"KubeletHas{reason}",
                "message": message,
                "lastHeartbeatTime": stamp,
                "lastTransitionTime": T0,
            }
            for kind, reason, message in (
                ("MemoryPressure", "SufficientMemory", "kubelet has sufficient memory available"),
                ("DiskPressure", "NoDiskPressure", "kubelet has no disk pressure"),
                ("PIDPressure", "SufficientPID", "kubelet has sufficient PID available"),
            )
        ] + [
            {
                **ready,
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
                "lastHeartbeatTime": stamp,
                "lastTransitionTime": T0,
            }
        ]
        ip = _node_ip(i)
        full = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "uid": _uid("node", i),
                "resourceVersion": str(100_000 + i),
                "creationTimestamp": T0,
                "labels": {
                    **labels,
                    "beta.kubernetes.io/arch": "amd64",
                    "beta.kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    "kubernetes.io/os": "linux",
                    "topology.kubernetes.io/region": "eu-west-1",
                    "eks.amazonaws.com/nodegroup": "workers",
                },
                "annotations": {
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                    "alpha.kubernetes.io/provided-node-ip": ip,
                },
                "managedFields": [
                    {
                        "apiVersion": "v1",
                        "fieldsType": "FieldsV1",
                        "fieldsV1": NODE_FIELDS,
                        "manager": "kubelet",
                        "operation": "Update",
                        "time": T0,
                    },
                    {
                        "apiVersion": "v1",
                        "fieldsType": "FieldsV1",
                        "fieldsV1": NODE_STATUS_FIELDS,
                        "manager": "kubelet",
                        "operation": "Update",
                        "subresource": "status",
                        "time": stamp,
                    },
                ],
            },
            "spec": {
                "podCIDR": f"100.{i // 250}.{i % 250}.0/24",
                "providerID": f"aws:///{zone}/i-{_uid(i)[:17]}",
                **({"taints": taints} if taints else {}),
            },
            "status": {
                "addresses": [
                    {"type": "InternalIP", "address": ip},
                    {"type": "Hostname", "address": name},
                    {"type": "InternalDNS", "address": name},
                ],
                "allocatable": {
                    **alloc,
                    "ephemeral-storage": "192188443124",
                    "hugepages-1Gi": "0",
                    "hugepages-2Mi": "0",
                },
                "capacity": capacity,
                "conditions": conditions,
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "images": [
                    {
                        "names": [f"{image}@sha256:{hashlib.sha256(image.encode()).hexdigest()}", image],
                        "sizeBytes": 100_000_000 + k * 7_654_321,
                    }
                    for k, image in enumerate(IMAGES)
                ],
                "nodeInfo": {
                    "architecture": "amd64",
                    "bootID": _uid("boot", i),
                    "containerRuntimeVersion": "containerd://1.7.22",
                    "kernelVersion": "6.1.112-124.190.amzn2023.x86_64",
                    "kubeProxyVersion": "v1.31.2-eks-7f9249a",
                    "kubeletVersion": "v1.31.2-eks-7f9249a",
                    "machineID": _uid("machine", i).replace("-", ""),
                    "operatingSystem": "linux",
                    "osImage": "Amazon Linux 2023.6.20241031",
                    "systemUUID": _uid("sys", i),
                },
            },
        }
        return lean, full

    def _pod(self, rnd: random.Random, p: int, groups: int) -> tuple[dict[str, Any], dict[str, Any]]:
        in_gang = p < groups * GANG
        g = p // GANG if in_gang else p % len(self.namespaces)
        ns = self.namespaces[g % len(self.namespaces)]
        name = f"train-{g:05d}-worker-{p % GANG}" if in_gang else f"svc-{p:06d}"
        cpu, mem = (2, "8Gi") if in_gang else (rnd.choice((1, 2, 4)), rnd.choice(("2Gi", "4Gi", "16Gi")))
        # 60 % of the pods run, spread over the nodes without GPUs (they do not tolerate the GPU taint)
        node_no = (p * 7919) % self.nodes if p % 5 < 3 else None
        if node_no is not None and node_no < max(1, self.nodes // 20):
            node_no = None
        node = _node_name(node_no) if node_no is not None else None
        labels = {"app": name.rsplit("-", 1)[0] if in_gang else f"svc-{p % 97}"}
        annotations = {"scheduling.k8s.io/group-name": f"train-{g:05d}"} if in_gang else {}
        created = _stamp(rnd)
        resources = {"requests": {"cpu": str(cpu), "memory": mem}, "limits": {"memory": mem}}
        lean_spec: dict[str, Any] = {"containers": [{"name": "main", "resources": resources}]}
        lean_meta: dict[str, Any] = {"name": name, "namespace": ns, "labels": labels, "creationTimestamp": created}
        if annotations:
            lean_meta["annotations"] = annotations
        phase = "Running" if node else "Pending"
        lean_status: dict[str, Any] = {"phase": phase}
        if node:
            lean_spec["nodeName"] = node
            lean_status["startTime"] = created
        lean = {"apiVersion": "v1", "kind": "Pod", "metadata": lean_meta, "spec": lean_spec, "status": lean_status}
        owner = (
            {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": f"train-{g:05d}"}
            if in_gang
            else {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"svc-{p % 97}-7d9f8b6c5d"}
        )
        image = IMAGES[p % len(IMAGES)]
        conditions = [
            {"type": t, "status": "True" if node else "False", "lastProbeTime": None, "lastTransitionTime": created}
            for t in (("Initialized", "Ready", "ContainersReady") if node else ())
        ]  # a pod that waits for a node has only PodScheduled
        conditions.append(
            {
                "type": "PodScheduled",
                "status": "True" if node else "False",
                "lastProbeTime": None,
                "lastTransitionTime": created,
                **(
                    {}
                    if node
                    else {"reason": "Unschedulable", "message": "0/5000 nodes are available: insufficient cpu."}
                ),
            }
        )
        full_status: dict[str, Any] = {"phase": phase, "conditions": conditions, "qosClass": "Burstable"}
        if node:
            full_status.update(
                hostIP=_node_ip(node_no or 0),
                podIP=f"100.{p // 65536}.{p // 256 % 256}.{p % 256}",
                podIPs=[{"ip": f"100.{p // 65536}.{p // 256 % 256}.{p % 256}"}],
                startTime=created,
                containerStatuses=[
                    {
                        "name": "main",
                        "ready": True,
                        "restartCount": 0,
                        "started": True,
                        "image": image,
                        "imageID": f"{image}@sha256:{hashlib.sha256(image.encode()).hexdigest()}",
                        "containerID": f"containerd://{hashlib.sha256(name.encode()).hexdigest()}",
                        "state": {"running": {"startedAt": created}},
                        "lastState": {},
                    }
                ],
            )
        full_spec: dict[str, Any] = {
            "containers": [
                {
                    "name": "main",
                    "image": image,
                    "imagePullPolicy": "IfNotPresent",
                    "resources": resources,
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }
            ],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "restartPolicy": "Always",
            "schedulerName": "volcano",
            "securityContext": {},
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {
                    "effect": "NoExecute",
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "tolerationSeconds": 300,
                },
                {
                    "effect": "NoExecute",
                    "key": "node.kubernetes.io/unreachable",
                    "operator": "Exists",
                    "tolerationSeconds": 300,
                },
            ],
        }
        if node:
            full_spec["nodeName"] = node
        managed = [
            {
                "apiVersion": "v1",
                "fieldsType": "FieldsV1",
                "fieldsV1": POD_FIELDS,
                "manager": "vc-controller-manager" if in_gang else "kube-controller-manager",
                "operation": "Update",
                "time": created,
            }
        ]
        if node:
            managed.append(
                {
                    "apiVersion": "v1",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": POD_STATUS_FIELDS,
                    "manager": "kubelet",
                    "operation": "Update",
                    "subresource": "status",
                    "time": created,
                }
            )
        full_meta = {
            **lean_meta,
            "uid": _uid("pod", ns, name),
            "resourceVersion": str(200_000 + p),
            "generateName": name.rsplit("-", 1)[0] + "-",
            "ownerReferences": [
                {**owner, "uid": _uid("owner", ns, owner["name"]), "controller": True, "blockOwnerDeletion": True}
            ],
            "managedFields": managed,
        }
        full = {"apiVersion": "v1", "kind": "Pod", "metadata": full_meta, "spec": full_spec, "status": full_status}
        return lean, full


def _pick(value: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: value[k] for k in keys if k in value}


def lean_of(full: dict[str, Any]) -> dict[str, Any]:
    """The object with only the fields Fairway's readers take (``engine.manifests.core``): the same cluster."""
    kind = full["kind"]
    meta = full["metadata"]
    if kind == "Pod":
        spec = full["spec"]
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": _pick(meta, ("name", "namespace", "labels", "annotations", "creationTimestamp")),
            "spec": {
                **_pick(spec, ("nodeName", "priority", "preemptionPolicy", "tolerations", "nodeSelector")),
                "containers": [_pick(c, ("name", "resources")) for c in spec["containers"]],
            },
            "status": _pick(full["status"], ("phase", "startTime")),
        }
    if kind == "Node":
        ready = [c for c in full["status"]["conditions"] if c["type"] == "Ready"]
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": _pick(meta, ("name", "labels")),
            "spec": _pick(full["spec"], ("taints",)),
            "status": {
                "allocatable": full["status"]["allocatable"],
                "conditions": [_pick(ready[0], ("type", "status"))],
            },
        }
    return {
        **{k: v for k, v in full.items() if k != "status"},
        "metadata": _pick(meta, ("name", "namespace", "annotations")),
    }


def write(cluster: Cluster, lean_path: Path, full_path: Path) -> None:
    """The two files, written object by object (the whole cluster is never in memory)."""
    with lean_path.open("w") as lean_out, full_path.open("w") as full_out:
        full_out.write("apiVersion: v1\nitems:\n")
        for _, full in cluster.objects():
            lean_out.write("---\n")
            lean_out.write(yaml.dump(lean_of(full), Dumper=Dumper, sort_keys=True))
            full_out.write(yaml.dump([full], Dumper=Dumper, sort_keys=True))
        full_out.write('kind: List\nmetadata:\n  resourceVersion: ""\n')


def run(path: Path) -> tuple[int, float, int, bytes, str]:
    """``fairway simulate -f PATH -o json`` in a child: exit code, seconds, peak RSS (bytes, ``os.wait4``), stdout,
    stderr."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "controlplane.cli", "simulate", "-f", str(path), "-o", "json"],
            cwd=REPO,
            stdout=out,
            stderr=err,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return proc.returncode, seconds, usage.ru_maxrss * 1024, out.read(), err.read().decode(errors="replace")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=50_000)
    parser.add_argument("--dir", type=Path, help="where the files go (kept); default a temporary folder")
    parser.add_argument("--only", choices=("lean", "full"))
    parser.add_argument("--write-only", action="store_true")
    args = parser.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="fairway-big-"))
    folder.mkdir(parents=True, exist_ok=True)
    lean, full = folder / "lean.yaml", folder / "full.yaml"
    if not (lean.exists() and full.exists()):
        started = time.perf_counter()
        write(Cluster(args.nodes, args.pods), lean, full)
        print(f"wrote {lean} and {full} in {time.perf_counter() - started:.1f} s")
    for path in (lean, full):
        print(f"{path.name}: {path.stat().st_size / 1e6:.1f} MB")
    if args.write_only:
        return 0
    outputs: dict[str, bytes] = {}
    for label, path in (("lean", lean), ("full", full)):
        if args.only and args.only != label:
            continue
        code, seconds, rss, out, err = run(path)
        print(f"{label:5s} exit {code}  wall {seconds:6.1f} s  peak RSS {rss / 2**20:7.0f} MiB")
        if code != 0:
            print("   ", err.strip().splitlines()[-1] if err.strip() else "(no stderr)")
        outputs[label] = out
    if len(outputs) == 2 and all(outputs.values()):
        documents = [json.loads(outputs[label]) for label in ("lean", "full")]
        for document in documents:
            for session in document["sessions"]:
                session.pop("duration_ms")  # wall clock
        print("outputs equal (durations aside)" if documents[0] == documents[1] else "OUTPUTS DIFFER")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
