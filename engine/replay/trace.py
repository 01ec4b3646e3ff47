"""The trace format (``docs/replay.md``): what happened on a cluster over a window, as JSON Lines.

Version 4 (versions 1 to 3 still read: version 3 is version 4 without the fields marked *4*, version 2 without
those marked *3* too, and version 1 without those marked *2*; a trace is written in the lowest version that holds
it, ``written_version``). One JSON object per
line, each with a ``kind``:

* line 1, ``FairwayTrace``: ``version`` (4), ``cluster``, ``from`` and ``to`` (the window, RFC 3339 UTC), ``period``
  (the session period, seconds), ``source`` (who wrote it: ``export``, ``soak``, ``generator``), and where it is not
  ``same`` ``replacements`` (how the cluster replaces an evicted pod, which decides the replacement's place among its
  job's pods: ``same``, the pod made again under its own name keeps its creation, as a Kubernetes job controller's
  pod of the same name is kept on its row; ``new``, a new pod ``<name>-r<N>`` created at the eviction, as the
  simulated job controller of a cluster of simulated node agents makes it);
* at most one ``Tree``: ``objects``, the queue and quota trees, the namespaces and the nodes at the window's start as
  Kubernetes manifests (the kinds ``fairway simulate`` reads); a cluster whose queues have quota per Kueue
  ResourceFlavor writes its queue tree as Kueue's objects (*2*: ``ResourceFlavor``, ``ClusterQueue`` with the quota
  per flavor, ``Cohort``, ``LocalQueue``), which the replay reads with its flavors;
* ``Edit``: ``time`` and ``change``, one tree edit in the what-if change language (``engine.changes``);
* ``Job``: ``namespace``, ``name``, ``queue``, ``quotaGroup`` (or null), ``submit``, ``priority``, ``preemptible``,
  ``minMember``, ``minResources`` (the podgroup's, as quantities; null: none, so admission checks nothing),
  ``roles`` (each ``name``, ``pods``, ``request`` as quantities, and where the pods have them their
  ``nodeSelector`` and ``tolerations`` as in a pod's spec and *3* ``nodeAffinity``, the ``nodeSelectorTerms`` of their
  required node affinity), ``start`` and ``finish`` (null:
  not started / still running at ``to``), ``runtime`` (seconds of work of one pod, or null when unknown),
  ``podRuntimes`` (each pod's seconds of work, roles in order, where they differ; else null),
  ``evictions`` (how many of its pods were evicted) and ``flavors`` (*2*: the ResourceFlavor the cluster gave it per
  resource, ``{"cpu": "spot"}``; null or absent: none), and where it is not its ``submit`` ``created`` (the creation the
  live sessions ordered it by among the jobs of its priority: a job already running when the Kubernetes adapter first
  mirrored it is submitted at its first start, and its row was created after it); *4* ``user`` and ``userGroups``,
  who submitted it and that user's groups, where known (absent: its namespace counts as its user, as the per-user
  limits count a job of no known user).

Reading is strict and names the line and the field of the first problem (``TraceError``); an unknown ``kind`` or an
unknown key is skipped (the format only grows), a ``version`` above ours is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from engine.manifests.core import read_node_selector_terms
from engine.manifests.export import node_selector_terms
from engine.objects import NodeAffinity, Toleration
from engine.resources import QuantityError, ResourceList, parse_resource_list
from engine.userlimits import MAX_NAME

__all__ = [
    "VERSION",
    "Trace",
    "TraceEdit",
    "TraceError",
    "TraceHeader",
    "TraceJob",
    "TraceRole",
    "format_time",
    "parse_time",
    "read_tolerations",
    "read_trace",
    "toleration_dict",
    "trace_lines",
    "written_version",
]

VERSION = 4
HEADER_KIND = "FairwayTrace"
REPLACEMENTS = ("same", "new")


class TraceError(ValueError):
    """A trace that cannot be read; ``str()`` is one line naming the line number and the field."""


@dataclass(frozen=True)
class TraceHeader:
    cluster: str
    start: float  # the window (epoch seconds)
    end: float
    period: float  # the session period (seconds)
    source: str = "export"
    version: int = VERSION
    # how the cluster replaces an evicted pod: ``same`` (made again under its own name, keeping its creation) or ``new``
    # (a new pod ``<name>-r<N>`` created at the eviction: the simulated job controller's)
    replacements: str = "same"


@dataclass(frozen=True)
class TraceRole:
    name: str
    pods: int
    request: ResourceList
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    node_affinity: NodeAffinity = ()  # the pods' required node affinity (version 3)


@dataclass(frozen=True)
class TraceJob:
    namespace: str
    name: str
    queue: str
    submit: float
    roles: tuple[TraceRole, ...]
    quota_group: str | None = None
    priority: int = 0
    preemptible: bool = True
    min_member: int = 1
    min_resources: ResourceList | None = None  # the podgroup's minResources (None: it has none)
    start: float | None = None
    finish: float | None = None
    runtime: float | None = None
    pod_runtimes: tuple[float, ...] | None = None  # each pod's, roles in order, where they differ
    evictions: int = 0
    flavors: Mapping[str, str] | None = None  # resource -> the ResourceFlavor the cluster gave it (version 2)
    created: float | None = None  # the creation the live sessions ordered it by, where not its submit (None: submit)
    user: str | None = None  # who submitted it (version 4; None: its namespace counts as its user)
    user_groups: tuple[str, ...] = ()  # that user's groups (version 4), which the per-user limits count too

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def pods(self) -> int:
        return sum(r.pods for r in self.roles)


@dataclass(frozen=True)
class TraceEdit:
    time: float
    change: Mapping[str, Any]


@dataclass
class Trace:
    header: TraceHeader
    jobs: list[TraceJob] = field(default_factory=list)
    edits: list[TraceEdit] = field(default_factory=list)
    tree: list[dict[str, Any]] | None = None


def format_time(t: float) -> str:
    """Epoch seconds as RFC 3339 UTC (``2026-03-02T08:00:00Z``; fractions only when there are some)."""
    dt = datetime.fromtimestamp(t, tz=UTC)
    text = dt.isoformat(timespec="microseconds" if dt.microsecond else "seconds")
    return text.replace("+00:00", "Z")


def parse_time(value: Any, where: str) -> float:
    if not isinstance(value, str):
        raise TraceError(f"{where}: must be an RFC 3339 time such as 2026-03-02T08:00:00Z, got {value!r}")
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        raise TraceError(f"{where}: {value!r} is not an RFC 3339 time (e.g. 2026-03-02T08:00:00Z)") from None
    if dt.tzinfo is None:
        raise TraceError(f"{where}: {value!r} has no time zone (write Z for UTC)")
    return dt.timestamp()


def _opt_time(obj: Mapping[str, Any], key: str, where: str) -> float | None:
    value = obj.get(key)
    return None if value is None else parse_time(value, f"{where}: {key}")


def _str(obj: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = obj.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value:
        raise TraceError(f"{where}: {key}: must be a non-empty string, got {value!r}")
    return value


def _int(obj: Mapping[str, Any], key: str, where: str, default: int, minimum: int | None = None) -> int:
    value = obj.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise TraceError(f"{where}: {key}: must be a whole number, got {value!r}")
    if minimum is not None and value < minimum:
        raise TraceError(f"{where}: {key}: must be at least {minimum}, got {value}")
    return value


def _seconds(obj: Mapping[str, Any], key: str, where: str) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        raise TraceError(f"{where}: {key}: must be a number of seconds >= 0, got {value!r}")
    return float(value)


def _header(obj: Mapping[str, Any], where: str) -> TraceHeader:
    version = obj.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise TraceError(f"{where}: version: must be a whole number >= 1, got {version!r}")
    if version > VERSION:
        raise TraceError(f"{where}: version: {version} is newer than this fairway reads ({VERSION}); upgrade fairway")
    start, end = parse_time(obj.get("from"), f"{where}: from"), parse_time(obj.get("to"), f"{where}: to")
    if end < start:
        raise TraceError(f"{where}: to: the window ends before it starts")
    period = _seconds(obj, "period", where)
    if not period:
        raise TraceError(f"{where}: period: the session period must be a number of seconds > 0")
    source = obj.get("source", "export")
    replacements = obj.get("replacements", "same")
    if replacements not in REPLACEMENTS:
        raise TraceError(f"{where}: replacements: must be one of {', '.join(REPLACEMENTS)}, got {replacements!r}")
    return TraceHeader(
        cluster=_str(obj, "cluster", where),
        start=start,
        end=end,
        period=period,
        source=str(source),
        version=version,
        replacements=replacements,
    )


def _roles(obj: Mapping[str, Any], where: str) -> tuple[TraceRole, ...]:
    roles = obj.get("roles")
    if not isinstance(roles, list) or not roles:
        raise TraceError(f"{where}: roles: must be a non-empty list of {{name, pods, request}}")
    out = []
    for i, role in enumerate(roles):
        at = f"{where}: roles[{i}]"
        if not isinstance(role, Mapping):
            raise TraceError(f"{at}: must be an object with name, pods and request")
        try:
            request = parse_resource_list(role.get("request") or {}, "request")
        except QuantityError as exc:
            raise TraceError(f"{at}.{exc}") from None
        out.append(
            TraceRole(
                name=str(role.get("name") or ""),
                pods=_int(role, "pods", at, 1, 1),
                request=request,
                node_selector=_selector(role.get("nodeSelector"), f"{at}: nodeSelector"),
                tolerations=read_tolerations(role.get("tolerations"), f"{at}: tolerations"),
                node_affinity=read_affinity(role.get("nodeAffinity"), f"{at}: nodeAffinity"),
            )
        )
    return tuple(out)


def read_affinity(value: Any, where: str) -> NodeAffinity:
    """A required node affinity's ``nodeSelectorTerms`` as in a pod's spec (null or absent: none)."""
    if value is None:
        return ()
    try:
        return read_node_selector_terms(value, "nodeAffinity")
    except ValueError as exc:
        raise TraceError(f"{where}: {str(exc).removeprefix('nodeAffinity')}") from None


def _selector(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise TraceError(f"{where}: must be an object of label names to values (strings)")
    return {str(k): v for k, v in value.items()}


_OPERATORS = ("Equal", "Exists")
_EFFECTS = ("", "NoSchedule", "PreferNoSchedule", "NoExecute")


def read_tolerations(value: Any, where: str) -> tuple[Toleration, ...]:
    """A pod spec's tolerations (``key``, ``operator``, ``value``, ``effect``, ``tolerationSeconds``)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise TraceError(f"{where}: must be a list of tolerations as in a pod's spec")
    out = []
    for i, raw in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(raw, Mapping):
            raise TraceError(f"{at}: must be an object with key, operator, value and effect")
        texts = {k: raw.get(k) or "" for k in ("key", "operator", "value", "effect")}
        for k, v in texts.items():
            if not isinstance(v, str):
                raise TraceError(f"{at}.{k}: must be a string, got {v!r}")
        operator = texts["operator"] or "Equal"
        if operator not in _OPERATORS:
            raise TraceError(f"{at}.operator: must be Equal or Exists, got {operator!r}")
        if texts["effect"] not in _EFFECTS:
            raise TraceError(f"{at}.effect: must be NoSchedule, PreferNoSchedule or NoExecute, got {texts['effect']!r}")
        seconds = raw.get("tolerationSeconds")
        if seconds is not None and (not isinstance(seconds, int) or isinstance(seconds, bool)):
            raise TraceError(f"{at}.tolerationSeconds: must be a whole number, got {seconds!r}")
        out.append(
            Toleration(
                key=texts["key"],
                operator=operator,
                value=texts["value"],
                effect=texts["effect"],
                toleration_seconds=seconds,
            )
        )
    return tuple(out)


def toleration_dict(t: Toleration) -> dict[str, Any]:
    """A toleration as in a pod's spec (empty fields left out)."""
    out: dict[str, Any] = {k: v for k, v in (("key", t.key), ("operator", t.operator), ("value", t.value)) if v}
    if t.effect:
        out["effect"] = t.effect
    if t.toleration_seconds is not None:
        out["tolerationSeconds"] = t.toleration_seconds
    return out


def _min_resources(obj: Mapping[str, Any], where: str) -> ResourceList | None:
    value = obj.get("minResources")
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise TraceError(f"{where}: minResources: must be an object of quantities or null")
    try:
        return parse_resource_list(value, "minResources")
    except QuantityError as exc:
        raise TraceError(f"{where}: {exc}") from None


def _pod_runtimes(obj: Mapping[str, Any], where: str) -> tuple[float, ...] | None:
    value = obj.get("podRuntimes")
    if value is None:
        return None
    if not isinstance(value, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in value
    ):
        raise TraceError(f"{where}: podRuntimes: must be a list of seconds >= 0, one a pod, or null")
    return tuple(float(v) for v in value)


def _flavors(obj: Mapping[str, Any], where: str) -> dict[str, str] | None:
    value = obj.get("flavors")
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()
    ):
        raise TraceError(f"{where}: flavors: must be an object of resource names to ResourceFlavor names, or null")
    return dict(value)


def _user(obj: Mapping[str, Any], where: str) -> str | None:
    value = obj.get("user")
    if value is not None and (not isinstance(value, str) or not value or len(value) > MAX_NAME):
        raise TraceError(f"{where}: user: must be a name of 1 to {MAX_NAME} characters or null, got {value!r}")
    return value


def _user_groups(obj: Mapping[str, Any], where: str) -> tuple[str, ...]:
    value = obj.get("userGroups") or []
    if not isinstance(value, list) or not all(isinstance(g, str) and 0 < len(g) <= MAX_NAME for g in value):
        raise TraceError(f"{where}: userGroups: must be a list of names of 1 to {MAX_NAME} characters")
    return tuple(value)


def _job(obj: Mapping[str, Any], where: str) -> TraceJob:
    namespace, name = _str(obj, "namespace", where), _str(obj, "name", where)
    where = f"{where} (Job {namespace}/{name})"
    preemptible = obj.get("preemptible", True)
    if not isinstance(preemptible, bool):
        raise TraceError(f"{where}: preemptible: must be true or false, got {preemptible!r}")
    group = obj.get("quotaGroup")
    if group is not None and (not isinstance(group, str) or not group):
        raise TraceError(f"{where}: quotaGroup: must be a name or null, got {group!r}")
    job = TraceJob(
        namespace=namespace,
        name=name,
        queue=_str(obj, "queue", where),
        submit=parse_time(obj.get("submit"), f"{where}: submit"),
        roles=_roles(obj, where),
        quota_group=group,
        priority=_int(obj, "priority", where, 0),
        preemptible=preemptible,
        min_member=_int(obj, "minMember", where, 1, 1),
        min_resources=_min_resources(obj, where),
        start=_opt_time(obj, "start", where),
        finish=_opt_time(obj, "finish", where),
        runtime=_seconds(obj, "runtime", where),
        pod_runtimes=_pod_runtimes(obj, where),
        evictions=_int(obj, "evictions", where, 0, 0),
        flavors=_flavors(obj, where),
        created=_opt_time(obj, "created", where),
        user=_user(obj, where),
        user_groups=_user_groups(obj, where),
    )
    if job.pod_runtimes is not None and len(job.pod_runtimes) != job.pods:
        raise TraceError(f"{where}: podRuntimes: {len(job.pod_runtimes)} runtimes for its {job.pods} pods")
    if job.min_member > job.pods:
        raise TraceError(f"{where}: minMember: {job.min_member} is more than its {job.pods} pods")
    if job.start is not None and job.start < job.submit:
        raise TraceError(f"{where}: start: before its submit time")
    if job.finish is not None and (job.start is None or job.finish < job.start):
        raise TraceError(f"{where}: finish: a finish needs a start before it")
    return job


def read_trace(lines: Iterable[str], name: str = "trace") -> Trace:
    """Read a trace (its lines); raises ``TraceError`` naming ``name``, the line and the field."""
    header: TraceHeader | None = None
    trace: Trace | None = None
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        where = f"{name}: line {number}"
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TraceError(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(obj, dict):
            raise TraceError(f"{where}: each line must be a JSON object with a kind")
        kind = obj.get("kind")
        if header is None:
            if kind != HEADER_KIND:
                raise TraceError(f"{where}: kind: the first line must be the {HEADER_KIND} header, got {kind!r}")
            header = _header(obj, where)
            trace = Trace(header=header)
            continue
        assert trace is not None
        if kind == "Job":
            job = _job(obj, where)
            if job.key in seen:
                raise TraceError(f"{where}: name: job {job.key} appears twice")
            seen.add(job.key)
            trace.jobs.append(job)
        elif kind == "Edit":
            change = obj.get("change")
            if not isinstance(change, Mapping):
                raise TraceError(f"{where}: change: must be an object in the what-if change language")
            trace.edits.append(TraceEdit(time=parse_time(obj.get("time"), f"{where}: time"), change=change))
        elif kind == "Tree":
            objects = obj.get("objects")
            if not isinstance(objects, list) or not all(isinstance(o, Mapping) for o in objects):
                raise TraceError(f"{where}: objects: must be a list of Kubernetes objects")
            if trace.tree is not None:
                raise TraceError(f"{where}: kind: a trace holds one Tree")
            trace.tree = [dict(o) for o in objects]
        # any other kind: a later version's record, skipped (the format only grows)
    if trace is None:
        raise TraceError(f"{name}: line 1: kind: the trace is empty (the first line must be the {HEADER_KIND} header)")
    trace.jobs.sort(key=lambda j: (j.submit, j.namespace, j.name))
    trace.edits.sort(key=lambda e: e.time)
    return trace


def _quantities(request: ResourceList) -> dict[str, str | None]:
    return {k: v for k, v in request.to_quantities().items() if v not in (None, "0")}


def job_line(job: TraceJob) -> dict[str, Any]:
    return {
        "kind": "Job",
        "namespace": job.namespace,
        "name": job.name,
        "queue": job.queue,
        "quotaGroup": job.quota_group,
        "submit": format_time(job.submit),
        "priority": job.priority,
        "preemptible": job.preemptible,
        "minMember": job.min_member,
        "minResources": None if job.min_resources is None else _quantities(job.min_resources),
        "roles": [_role_line(r) for r in job.roles],
        "start": None if job.start is None else format_time(job.start),
        "finish": None if job.finish is None else format_time(job.finish),
        "runtime": job.runtime,
        "podRuntimes": None if job.pod_runtimes is None else list(job.pod_runtimes),
        "evictions": job.evictions,
        **({"flavors": dict(job.flavors)} if job.flavors else {}),
        **({"created": format_time(job.created)} if job.created is not None and job.created != job.submit else {}),
        **({"user": job.user} if job.user else {}),
        **({"userGroups": list(job.user_groups)} if job.user_groups else {}),
    }


def _role_line(role: TraceRole) -> dict[str, Any]:
    out: dict[str, Any] = {"name": role.name, "pods": role.pods, "request": _quantities(role.request)}
    if role.node_selector:
        out["nodeSelector"] = dict(role.node_selector)
    if role.tolerations:
        out["tolerations"] = [toleration_dict(t) for t in role.tolerations]
    if role.node_affinity:
        out["nodeAffinity"] = node_selector_terms(role.node_affinity)
    return out


def written_version(trace: Trace) -> int:
    """The lowest version that holds ``trace``: 4 when a job has a submitter (a fairway of version 3 would count it
    for its namespace under the per-user limits), 3 when a role has a required node affinity (a fairway of version 2
    would place its pods anywhere), 2 when it has flavors (a job's ``flavors``, a ResourceFlavor in its Tree: a fairway
    of version 1 would replay it without them), else 1 (an older fairway reads it)."""
    if any(job.user or job.user_groups for job in trace.jobs):
        return 4
    if any(role.node_affinity for job in trace.jobs for role in job.roles):
        return 3
    flavored_tree = any(o.get("kind") == "ResourceFlavor" for o in trace.tree or ())
    return 2 if flavored_tree or any(job.flavors for job in trace.jobs) else 1


def trace_lines(trace: Trace) -> Iterator[str]:
    """The trace as its lines (without newlines): the header, the tree, the edits, then the jobs by submit time."""
    h = trace.header
    yield _dump(
        {
            "kind": HEADER_KIND,
            "version": written_version(trace),
            "cluster": h.cluster,
            "from": format_time(h.start),
            "to": format_time(h.end),
            "period": h.period,
            "source": h.source,
            **({"replacements": h.replacements} if h.replacements != "same" else {}),
        }
    )
    if trace.tree is not None:
        yield _dump({"kind": "Tree", "objects": trace.tree})
    for edit in sorted(trace.edits, key=lambda e: e.time):
        yield _dump({"kind": "Edit", "time": format_time(edit.time), "change": dict(edit.change)})
    for job in sorted(trace.jobs, key=lambda j: (j.submit, j.namespace, j.name)):
        yield _dump(job_line(job))


def _dump(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=False)
