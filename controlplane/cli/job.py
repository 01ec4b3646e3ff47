"""``fairway job``: jobs (podgroups), their pods, and why one waits.

fairway job list [--namespace NS] [--queue Q] [--quota-group G] [--phase PHASE]
fairway job view NS/NAME
fairway job why NS/NAME
fairway job suspend|resume|requeue|delete NS/NAME   (or NAME --namespace NS)
fairway job yaml NS/NAME                            (the job as manifests: its PodGroup and pods)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import yaml

from controlplane.cli.client import EXIT_OK, ApiError, Client, UsageError
from controlplane.cli.output import details, emit, fmt_resources, table
from engine.flavors import flavors_sentence
from engine.wording import plural

PHASES = ("Pending", "Inqueue", "Running", "Unknown", "Completed")
VALUE_FIELDS = (
    ("request", "request"),
    ("allocated", "allocated"),
    ("used", "used"),
    ("reserved", "reserved"),
    ("pipelined", "pipelined"),
    ("deserved", "deserved"),
    ("real_capability", "realCapability"),
    ("runtime", "runtime"),
    ("auto_scaled_min", "autoScaledMin"),
    ("borrowed", "borrowed"),
    ("lent", "lent"),
)


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    job = sub.add_parser(
        "job",
        help="jobs (podgroups): list, view, why one waits; suspend, resume, requeue, delete, yaml",
        parents=[common],
    )
    jsub = job.add_subparsers(dest="job_cmd", required=True, metavar="COMMAND")
    lst = jsub.add_parser("list", help="list jobs", parents=[common])
    lst.add_argument("--namespace", "-N")
    lst.add_argument("--queue", "-q")
    lst.add_argument("--quota-group", "-g")
    lst.add_argument("--phase", choices=PHASES)
    lst.add_argument("--cluster")
    for alias in ("view", "get"):
        view = jsub.add_parser(alias, help="show one job, its pods and evictions", parents=[common])
        view.add_argument("job", metavar="NAMESPACE/NAME")
        view.add_argument("--cluster")
    why = jsub.add_parser("why", help="why a job waits: the reason, its numbers, the blocking node", parents=[common])
    why.add_argument("job", metavar="NAMESPACE/NAME")
    why.add_argument("--cluster")
    why.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="while its start estimate is still being computed, ask again every few seconds for up to SECONDS",
    )
    for name, text in ACTION_HELP.items():
        act = jsub.add_parser(name, help=text, parents=[common])
        act.add_argument("job", metavar="NAMESPACE/NAME", help="the job, or its NAME with --namespace")
        act.add_argument("--namespace", "-N", help="the job's namespace, when the job is given by its NAME alone")
        act.add_argument("--cluster")
        if name == "delete":
            act.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")


ESTIMATE_POLL_SECONDS = 2.0  # how often ``job why --wait`` asks again while the estimate is being computed


def _why_waiting_for_the_estimate(client: Client, pk: int, job: str, wait: float) -> dict[str, Any]:
    """The why endpoint's answer; with ``wait`` (seconds), asked again while its start estimate is still pending
    (the estimates worker computes it off the request), until it is there or the time is up."""
    if wait < 0:
        raise UsageError(f"--wait: expected seconds, 0 or more, got {wait:g}")
    deadline = time.monotonic() + wait
    while True:
        why: dict[str, Any] = client.call("GET", f"podgroups/{pk}/why/", obj=f'job "{job}"')
        estimate = why.get("start_estimate") or {}
        left = deadline - time.monotonic()
        if estimate.get("state") != "pending" or left <= 0:
            return why
        time.sleep(min(ESTIMATE_POLL_SECONDS, left))


ACTION_HELP = {
    "suspend": "suspend a job: its running pods are released and nothing of it is placed until it is resumed",
    "resume": "resume a suspended job: it waits for admission again",
    "requeue": "release a job's pods and let it wait for admission again",
    "delete": "delete a job (recorded as removed, with who did it)",
    "yaml": "the job as manifests: its Volcano PodGroup and its pods, as fairway simulate reads them",
}


def _job_text(args: argparse.Namespace) -> str:
    """``NS/NAME``, or ``NAME`` with ``--namespace NS``."""
    text = str(args.job)
    namespace = getattr(args, "namespace", None)
    if namespace and "/" not in text:
        return f"{namespace}/{text}"
    if namespace and _split(text)[0] != namespace:
        raise UsageError(f"--namespace {namespace} names another namespace than the job {text}")
    return text


def _act(args: argparse.Namespace, client: Client, cluster: str | None) -> int:
    text = _job_text(args)
    pg = find_job(client, text, cluster)
    if args.job_cmd == "yaml":
        docs = client.call("GET", f"podgroups/{pg['id']}/manifest/", params={"output": "json"}, obj=f'job "{text}"')
        if args.output == "json":
            print(json.dumps(docs, indent=2))
        else:
            sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False))
        return EXIT_OK
    if args.job_cmd == "delete" and not args.yes:
        if not sys.stdin.isatty():
            raise UsageError(f"deleting job {text} needs confirmation: pass --yes")
        answer = input(f"Delete job {text} and its pods? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("Not deleted")
            return EXIT_OK
    done = client.call("POST", f"podgroups/{pg['id']}/{args.job_cmd}/", obj=f'job "{text}"')
    emit(done, args.output, lambda d: print(_done_line(text, d)))
    return EXIT_OK


def _done_line(text: str, done: dict[str, Any]) -> str:
    line = f"job {text}: {done['message']}"
    return line + (" (the Kubernetes adapter carries it out)" if done.get("pending") else "")


def _split(text: str) -> tuple[str, str]:
    ns, sep, name = text.partition("/")
    if not sep or not ns or not name or "/" in name:
        raise UsageError(f"expected a job as NAMESPACE/NAME, got {text!r}")
    return ns, name


def find_job(client: Client, text: str, cluster: str | None) -> dict[str, Any]:
    ns, name = _split(text)
    params = {"namespace": ns, "name": name, **({"cluster": cluster} if cluster else {})}
    found = [pg for pg in client.list_all("podgroups/", params) if pg["name"] == name]
    if not found:
        raise ApiError(404, [f'job "{ns}/{name}" not found'])
    if len(found) > 1:
        clusters = ", ".join(sorted(pg["cluster"] for pg in found))
        raise UsageError(f'job "{ns}/{name}" exists in several clusters ({clusters}); pass --cluster')
    return found[0]


def _job_row(pg: dict[str, Any]) -> list[Any]:
    return [
        f"{pg['namespace']}/{pg['name']}",
        pg["queue"],
        pg["phase"],
        pg["min_member"],
        pg.get("reason") or "-",
        pg.get("created", "")[:19].replace("T", " "),
    ]


def _time(text: str | None) -> str:
    return (text or "")[:19].replace("T", " ") or "-"


def print_job(data: dict[str, Any]) -> None:
    pg, pods, evictions = data["job"], data["pods"], data["evictions"]
    details(
        [
            ("Name", f"{pg['namespace']}/{pg['name']}"),
            ("Queue", pg["queue"]),
            ("Phase", pg["phase"]),
            ("Min member", pg["min_member"]),
            ("Min resources", fmt_resources(pg.get("min_resources"))),
            ("Priority", pg.get("priority", 0)),
            *([("Flavor", flavors_sentence(pg["flavors"], pg.get("pod_set_flavors")))] if pg.get("flavors") else []),
            ("Reason", pg.get("reason") or "-"),
            ("Message", pg.get("message") or "-"),
            ("Cluster", pg.get("cluster", "-")),
            ("Created", _time(pg.get("created"))),
        ]
    )
    print()
    if pods:
        table(
            [
                [
                    p["name"],
                    p["status"],
                    p.get("node") or "-",
                    fmt_resources(p.get("request")),
                    _time(p.get("started")),
                    _time(p.get("finished")),
                ]
                for p in pods
            ],
            ("Pod", "Status", "Node", "Request", "Started", "Finished"),
        )
    else:
        print("No pods.")
    if evictions:
        print()
        print("Evictions:")
        table(
            [
                [
                    _time(e["time"]),
                    e["pod"],
                    e["action"],
                    _taker(e),
                    e.get("message") or "",
                ]
                for e in evictions
            ],
            ("When", "Pod", "Action", "Taken by", "Why"),
        )


def _taker(e: dict[str, Any]) -> str:
    if e.get("preemptor_job"):
        return f"{e['preemptor_job']} (queue {e['preemptor_queue']})"
    return e.get("preemptor") or "-"


def _node_values(client: Client, node: dict[str, str] | None, cluster: str | None) -> dict[str, Any] | None:
    """The blocking node's values now, from its explain endpoint (``None`` when it has none or is not readable)."""
    if not node or node["kind"] not in ("queue", "quota_group"):
        return None
    path = "queues" if node["kind"] == "queue" else "quota-groups"
    try:
        data = client.call("GET", f"{path}/{node['name']}/explain/", params={"cluster": cluster} if cluster else None)
    except ApiError:
        return None
    values: dict[str, Any] | None = data.get("values") if isinstance(data, dict) else None
    return values


def _path_line(entry: dict[str, Any]) -> str:
    parts = []
    if entry.get("hidden"):
        parts.append("(outside your teams' subtrees)")
    for key in ("capability", "deserved", "guarantee", "min", "max"):
        if entry.get(key):
            parts.append(f"{key}={fmt_resources(entry[key])}")
    if "weight" in entry and entry.get("kind") == "queue":
        parts.insert(0, f"weight={entry['weight']}")
    if entry.get("past_usage"):  # fairness over time, when the cluster's policy turns it on
        parts.append(f"({entry['past_usage']})")
    mark = "  <- blocks this job" if entry.get("blocking") else ""
    return f"{entry['name']}  {' '.join(parts)}".rstrip() + mark


def print_why(data: dict[str, Any]) -> None:
    why = data["why"]
    job = f"{why['namespace']}/{why['name']}"
    since = f" since {_time(why['since'])}" if why.get("since") else ""
    pods = why.get("pods") or {}
    pod_text = ", ".join(f"{n} {s}" for s, n in sorted(pods.items())) or "no pods"
    details(
        [
            ("Job", job),
            ("Queue", why["queue"]),
            ("Phase", f"{why['phase']}{since}"),
            ("Pods", pod_text),
            ("Reason", why.get("reason") or "-"),
        ]
    )
    if why.get("max_exec"):  # Kueue's maximum execution time, used and left
        print(f"\nMaximum execution time: {why['max_exec']['text']}")
    if why.get("flavors_text"):  # Kueue's ResourceFlavors it was given, and why those
        print(f"\nFlavor: {why['flavors_text']}")
        if why.get("flavor_assignment"):
            print(f"  Why: {why['flavor_assignment']}")
    if why["phase"] == "Running" and not why.get("reason"):
        print(f"\nThe job runs: nothing holds it ({plural(why.get('min_member', 0), 'pod')} minimum).")
    elif why.get("message"):
        print(f"\n{why['message']}")
    estimate = why.get("start_estimate")  # the server's sentence (planning.estimates), as the job page says it
    if estimate:
        later = " (ask again in a few seconds, or wait for it: --wait 60)" if estimate.get("state") == "pending" else ""
        print(f"\nWhen will it start? {estimate['sentence'][:1].upper()}{estimate['sentence'][1:]}{later}.")
    place = why.get("queue_position")  # (planning.why.queue_position)
    if place:
        print(f"\nPlace in queue {why['queue']}: {place['position']} of {place['waiting']} waiting"
              f" ({plural(place['ahead'], 'job')} ahead)", end="")  # fmt: skip
        print(f"; {place['local_queue_position']} in LocalQueue {place['local_queue']}" if place["local_queue"] else "")
    node = why.get("blocking_node")
    blocker = why.get("blocker") or {}
    if node:
        print(f"\nBlocked by {node['kind'].replace('_', ' ')} {node['name']}", end="")
        print(f" ({blocker['limit']})" if blocker.get("limit") else "")
    elif blocker.get("kind"):
        print(f"\nBlocked by the {blocker['kind']}" + (f" ({blocker['limit']})" if blocker.get("limit") else ""))
    values = data.get("values")
    if values:
        shown = [(label, values[key]) for key, label in VALUE_FIELDS if key in values]
        if blocker.get("resource"):
            r = blocker["resource"]
            # only the resource it lacks; absent is none of it (null, present, is an unbounded amount)
            shown = [(label, ({r: v[r]} if r in v else {}) if isinstance(v, dict) else v) for label, v in shown]
        details([(f"  {label}", fmt_resources(v) if isinstance(v, dict) else v) for label, v in shown])
    for warning in why.get("recycling") or []:  # the server's sentence (scheduling.recycle_outlook), as the pages
        mine = warning.get("job_pods", 0)
        print(f"\nWarning: {warning['sentence']} ({mine} of them this job's): {warning['detail']}.")
    print("\nQueue path:")
    for depth, entry in enumerate(why["queue_path"]):
        print("  " + ("    " * (depth - 1) + "└── " if depth else "") + _path_line(entry))
    for chain in why.get("quota_paths") or []:
        print("\nQuota group path:")
        for depth, entry in enumerate(chain):
            print("  " + ("    " * (depth - 1) + "└── " if depth else "") + _path_line(entry))
    ns = why["namespace_detail"]
    hard = f", hard {fmt_resources(ns['hard'])}" if ns.get("hard") else ""
    print(
        f"\nNamespace: {ns['name']} (weight {ns['weight']}{hard})" + ("  <- blocks this job" if ns["blocking"] else "")
    )
    for section in why.get("governing_path") or []:  # the server's path (planning.why), as the job page shows it
        if section["title"] == "Cluster":
            print(f"\nCluster: {section['nodes'][0]['name']}  <- blocks this job")
    if why.get("evictions"):
        print(f"\nLatest evictions of its pods ({len(why['evictions'])}):")
        for e in why["evictions"]:
            taker = _taker(e)
            by = f" by {taker}" if taker != "-" else ""
            print(f"  {_time(e['time'])}  {e['pod']}  {e['action']}{by}: {e.get('message') or ''}")


def run(args: argparse.Namespace, client: Client) -> int:
    cluster = getattr(args, "cluster", None)
    if args.job_cmd == "list":
        params = {
            k: v
            for k, v in (
                ("namespace", args.namespace),
                ("queue", args.queue),
                ("quota_group", args.quota_group),
                ("phase", args.phase),
                ("cluster", cluster),
            )
            if v
        }
        jobs = client.list_all("podgroups/", params)
        if not jobs and args.output == "table":
            print("No jobs found")
            return EXIT_OK
        emit(
            jobs,
            args.output,
            lambda d: table([_job_row(pg) for pg in d], ("Job", "Queue", "Phase", "Min", "Reason", "Created")),
        )
    elif args.job_cmd in ACTION_HELP:
        return _act(args, client, cluster)
    elif args.job_cmd in ("view", "get"):
        pg = find_job(client, args.job, cluster)
        pods = client.list_all(
            "pods/", {"namespace": pg["namespace"], "podgroup": pg["name"], "cluster": pg["cluster"]}
        )
        why = client.call("GET", f"podgroups/{pg['id']}/why/", obj=f'job "{args.job}"')
        emit({"job": pg, "pods": pods, "evictions": why["evictions"]}, args.output, print_job)
    else:
        pg = find_job(client, args.job, cluster)
        why = _why_waiting_for_the_estimate(client, pg["id"], args.job, args.wait)
        values = _node_values(client, why.get("blocking_node"), pg.get("cluster"))
        emit({"why": why, "values": values}, args.output, print_why)
    return EXIT_OK
