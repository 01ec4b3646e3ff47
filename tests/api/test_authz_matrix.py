"""The authorization matrix (issue 9, item 2): every operation of the OpenAPI schema, six roles, an object of the
member's own subtree and one of another team, against the expected answer written down in ``EXPECTED``.

Roles: ``admin`` (staff); ``member`` (team-a, linked to queue ``dept-a`` and quota group ``g-dept-a``, so it owns
``team-a1``, ``g-team-a1``, namespace ``ns-a``); ``elsewhere`` (team-b, linked to the leaf queue ``team-b`` and
quota group ``g-team-b``, namespace ``ns-b``); ``agent`` (group ``node-agents``, bound to the pool ``pool-a``,
which holds node ``n-a``); ``nobody`` (a user in no team); ``anonymous``.

Targets: ``own`` addresses (or, for a create, names in its body) team-a's objects and node ``n-a`` with the pod on
it; ``foreign`` addresses team-b's and node ``n-b`` with its pod. So ``member`` acts on its own subtree and on
another team's, ``elsewhere`` the other way round. Shared objects (the cluster, a session) are the same for both.

The test fails on any answer that differs from the table — an unexpected success (2xx where 400/401/403/404 was
expected) as much as an unexpected refusal — and when the schema has an operation the table lacks or the other way
round, so a new endpoint cannot slip in without a row. Every cell runs in a savepoint that is rolled back, so each
starts from the same fixtures (one database, a few hundred requests, seconds).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone
from rest_framework.test import APIClient

from changerequests import services as change_requests
from engine.resources import parse_resource_list
from engine.session.decisions import SessionResult
from planning.models import ReplayRun
from quotas import services
from quotas.models import LocalQueue, Namespace, Queue, QuotaGroup, ResourceFlavor
from scheduling import recording, store
from scheduling.models import (
    Cluster,
    Eviction,
    Node,
    NodeAgentBinding,
    Pod,
    PodGroup,
    QuotaSample,
    SchedulingSession,
)
from security.models import SecurityEvent
from security.tokens import create_token

pytestmark = [pytest.mark.django_db, pytest.mark.slow]  # a few hundred requests: dealt out first

ROLES = ("admin", "member", "elsewhere", "agent", "nobody", "anonymous")
TARGETS = ("own", "foreign")

# operation id -> per role "own foreign" answers, in ROLES order. "200/400" accepts either (see the notes).
# fmt: off
EXPECTED: dict[str, str] = {
    # --- queues: team members read their subtree (others are 404), only admins change anything ---------------
    "v1_queues_list":                    "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_queues_create":                  "201 201 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_queues_retrieve":                "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_queues_update":                  "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_queues_partial_update":          "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_queues_destroy":                 "204 204 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_queues_open_create":             "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_queues_close_create":            "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_queues_explain_retrieve":        "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_queues_tree_list":               "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    # --- change requests: a team files within its subtree (elsewhere: 400 naming the node), sees its own; its
    # requester never decides it (403), only the requester withdraws; an approver above it (here only admins) decides
    "v1_change_requests_list":           "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_change_requests_create":         "201 201 | 201 400 | 400 201 | 403 403 | 403 403 | 401 401",
    "v1_change_requests_retrieve":       "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_change_requests_effect_retrieve": "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_change_requests_approve_create": "200 200 | 403 404 | 404 403 | 403 403 | 403 403 | 401 401",
    "v1_change_requests_reject_create":  "200 200 | 403 404 | 404 403 | 403 403 | 403 403 | 401 401",
    "v1_change_requests_withdraw_create": "403 403 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    # --- quota groups ----------------------------------------------------------------------------------------
    "v1_quota_groups_list":              "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_quota_groups_create":            "201 201 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_quota_groups_retrieve":          "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_quota_groups_update":            "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_quota_groups_partial_update":    "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_quota_groups_destroy":           "204 204 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_quota_groups_explain_retrieve":  "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_quota_groups_tree_list":         "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    # --- namespaces ------------------------------------------------------------------------------------------
    "v1_namespaces_list":                "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_namespaces_create":              "201 201 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_namespaces_retrieve":            "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_namespaces_update":              "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_namespaces_partial_update":      "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_namespaces_destroy":             "204 204 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    # Kueue's ResourceFlavors: no team's (every team reads them), admins write them
    "v1_resource_flavors_list":          "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_resource_flavors_create":        "201 201 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_resource_flavors_retrieve":      "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_resource_flavors_update":        "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_resource_flavors_partial_update": "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_resource_flavors_destroy":       "204 204 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    # Kueue's LocalQueues: a team reads those of its namespaces, admins write them
    "v1_local_queues_list":              "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_local_queues_create":            "201 201 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_local_queues_retrieve":          "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_local_queues_update":            "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_local_queues_partial_update":    "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_local_queues_destroy":           "204 204 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    # --- the cluster: read by team members, changed by admins; the agent API per node ----------------------
    "v1_clusters_list":                  "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_clusters_create":                "201 201 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_clusters_retrieve":              "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_clusters_update":                "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_clusters_partial_update":        "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_clusters_destroy":               "204 204 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_nodes_list":                     "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_nodes_create":                   "201 201 | 403 403 | 403 403 | 201 403 | 403 403 | 401 401",
    "v1_nodes_retrieve":                 "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_nodes_update":                   "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_nodes_partial_update":           "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_nodes_destroy":                  "204 204 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_nodes_heartbeat_create":         "200 200 | 403 403 | 403 403 | 200 403 | 403 403 | 401 401",
    "v1_nodes_pods_list":                "200 200 | 403 403 | 403 403 | 200 403 | 403 403 | 401 401",
    # --- jobs: team members submit and change only in their namespaces, leaf queues and quota groups -------
    # (a create naming another team's namespace is a 400 at "namespace"; a job of another team is 404)
    "v1_podgroups_list":                 "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_podgroups_create":               "201 201 | 201 400 | 400 201 | 403 403 | 403 403 | 401 401",
    "v1_podgroups_retrieve":             "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_podgroups_update":               "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_podgroups_partial_update":       "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_podgroups_destroy":              "204 204 | 204 404 | 404 204 | 403 403 | 403 403 | 401 401",
    "v1_podgroups_history_list":         "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_podgroups_why_retrieve":         "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    # job actions (scheduling.job_actions): the job is Pending, its pod Releasing: not suspended (resume: 409),
    # nothing of it placed (requeue: 409)
    "v1_podgroups_suspend_create":       "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_podgroups_resume_create":        "409 409 | 409 404 | 404 409 | 403 403 | 403 403 | 401 401",
    "v1_podgroups_requeue_create":       "409 409 | 409 404 | 404 409 | 403 403 | 403 403 | 401 401",
    "v1_podgroups_delete_create":        "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_podgroups_manifest_retrieve":    "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_pods_list":                      "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_pods_create":                    "201 201 | 201 400 | 400 201 | 403 403 | 403 403 | 401 401",
    "v1_pods_retrieve":                  "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    # a PUT repeats the pod's immutable fields: refused as such (400) for whoever may write it
    "v1_pods_update":                    "400/200 400/200 | 400/200 404 | 404 400/200 | 403 403 | 403 403 | 401 401",
    "v1_pods_partial_update":            "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_pods_destroy":                   "204 204 | 204 404 | 404 204 | 403 403 | 403 403 | 401 401",
    "v1_pods_status_create":             "200 200 | 403 403 | 403 403 | 200 403 | 403 403 | 401 401",
    "v1_pods_gone_create":               "200 200 | 403 403 | 403 403 | 200 403 | 403 403 | 401 401",
    # --- records: team members read what concerns their subtree -------------------------------------------
    "v1_sessions_list":                  "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_sessions_retrieve":              "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_sessions_decisions_list":        "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_evictions_list":                 "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_evictions_retrieve":             "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_samples_list":                   "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_samples_retrieve":               "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    # --- computed values: what-if proposals by team members stay inside their subtree ---------------------
    "v1_whatif_create":                  "200 200 | 200 400 | 400 200 | 403 403 | 403 403 | 401 401",
    "v1_simulate_create":                "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    # --- replays: started like a what-if (a member only inside its subtree); each reads its own runs -------
    "v1_replays_list":                   "200 200 | 200 200 | 200 200 | 403 403 | 403 403 | 401 401",
    "v1_replays_create":                 "201 201 | 201 400 | 400 201 | 403 403 | 403 403 | 401 401",
    "v1_replays_retrieve":               "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    "v1_replays_cancel_create":          "200 200 | 200 404 | 404 200 | 403 403 | 403 403 | 401 401",
    # --- one recorded session replayed: the whole cluster's inputs, admins only ---------------------------
    "v1_sessions_recorded_retrieve":     "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_sessions_replay_retrieve":       "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_sessions_replay_at_retrieve":    "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    # --- export: the whole organisation, admins only ------------------------------------------------------
    "v1_export_retrieve":                "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    # --- trace: the whole cluster's work, admins only ----------------------------------------------------
    "v1_trace_retrieve":                 "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    # --- audit: admins every node (or ?team='s subtrees), a member its own teams' subtrees only ---------------
    "v1_audit_retrieve":                 "200 200 | 200 403 | 403 200 | 403 403 | 403 403 | 401 401",
    # --- a team's department (the teams below it): admins, its members, the leads of a team above it ----------
    "v1_teams_department_retrieve":      "200 200 | 200 404 | 404 200 | 404 404 | 404 404 | 401 401",
    # --- the security log: staff only, read-only ---------------------------------------------------------
    "v1_security_events_list":           "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
    "v1_security_events_retrieve":       "200 200 | 403 403 | 403 403 | 403 403 | 403 403 | 401 401",
}
# fmt: on


def _parse(row: str) -> dict[tuple[str, str], set[int]]:
    cells = [c.split() for c in row.split("|")]
    assert len(cells) == len(ROLES) and all(len(c) == 2 for c in cells), row
    return {
        (role, target): {int(x) for x in cells[r][t].split("/")}
        for r, role in enumerate(ROLES)
        for t, target in enumerate(TARGETS)
    }


# -- the fixtures: two teams' objects, two nodes, a record of each kind ----------------------------------------


@dataclass
class World:
    ids: dict[str, int]
    clients: dict[str, APIClient]


def _build() -> World:
    services.ensure_builtins()
    cluster, _ = Cluster.objects.get_or_create(name="default")
    cpu = lambda n: parse_resource_list({"cpu": n})  # noqa: E731
    services.save_queue(None, {"name": "dept-a", "deserved": cpu("16")})
    services.save_queue(None, {"name": "team-a1", "parent": "dept-a", "deserved": cpu("8")})
    services.save_queue(None, {"name": "team-a2", "parent": "dept-a"})
    services.save_queue(None, {"name": "dept-b", "deserved": cpu("16")})
    services.save_queue(None, {"name": "team-b", "parent": "dept-b", "deserved": cpu("8")})
    services.save_quota_group(None, {"name": "g-dept-a", "is_parent": True, "min": cpu("8"), "max": cpu("16")})
    services.save_quota_group(None, {"name": "g-team-a1", "parent": "g-dept-a", "min": cpu("4"), "max": cpu("8")})
    services.save_quota_group(None, {"name": "g-spare-a", "parent": "g-dept-a", "max": cpu("8")})
    services.save_quota_group(None, {"name": "g-team-b", "min": cpu("4"), "max": cpu("8")})
    services.save_quota_group(None, {"name": "g-spare-b", "max": cpu("8")})
    ns = {
        side: Namespace.objects.create(
            name=f"ns-{side}",
            default_queue=Queue.objects.get(name=f"team-{side}1" if side == "a" else "team-b"),
            quota_group=QuotaGroup.objects.get(name=f"g-team-{side}1" if side == "a" else "g-team-b"),
        )
        for side in ("a", "b")
    }
    ids: dict[str, int] = {}
    for side in ("a", "b"):
        node = Node.objects.create(
            cluster=cluster, name=f"n-{side}", pool=f"pool-{side}", allocatable=cpu("32"), last_heartbeat=timezone.now()
        )
        pg = PodGroup.objects.create(
            cluster=cluster, namespace=ns[side], name=f"pg-{side}", queue=ns[side].default_queue, min_member=1
        )
        pod = Pod.objects.create(
            cluster=cluster,
            namespace=ns[side],
            name=f"pod-{side}",
            podgroup=pg,
            request=cpu("1"),
            quota_group=ns[side].quota_group,
            node=node,
            status="Releasing",  # on its node, being evicted: the agent may report it finished or gone
        )
        eviction = Eviction.objects.create(
            cluster=cluster, pod=pod, pod_uid=f"ns-{side}/pod-{side}", namespace=f"ns-{side}", node=node.name,
            action="reclaim", created=timezone.now(),
        )  # fmt: skip
        sample = QuotaSample.objects.create(
            cluster=cluster,
            time=timezone.now(),
            kind="queue",
            name=ns[side].default_queue.name,  # type: ignore[union-attr]
        )
        ids.update({f"pg-{side}": pg.pk, f"pod-{side}": pod.pk, f"ev-{side}": eviction.pk, f"sample-{side}": sample.pk})
        ids[f"security-{side}"] = SecurityEvent.objects.create(
            actor=f"user-{side}", kind="login", outcome="success", target=f"user-{side}"
        ).pk
    session = SchedulingSession.objects.create(cluster=cluster, started=timezone.now())
    ids["session"] = session.pk
    recording.forget(cluster.pk)  # its inputs recorded, for the replay of one session (a keyframe)
    recording.record(cluster, session, store.read_cluster(cluster)[0], SessionResult(), session.started.timestamp())
    for side in ("a", "b"):  # Kueue's ResourceFlavors (no queue names them: each may be deleted)
        ResourceFlavor.objects.create(name=f"flavor-{side}", node_labels={"pool": side})
        LocalQueue.objects.create(namespace=ns[side], name=f"lq-{side}", queue=ns[side].default_queue)

    User = get_user_model()
    team_a, team_b = Group.objects.create(name="team-a"), Group.objects.create(name="team-b")
    Queue.objects.get(name="dept-a").teams.add(team_a)
    QuotaGroup.objects.get(name="g-dept-a").teams.add(team_a)
    Queue.objects.get(name="team-b").teams.add(team_b)
    QuotaGroup.objects.get(name="g-team-b").teams.add(team_b)
    users = {
        "admin": User.objects.create_user("admin", is_staff=True),
        "member": User.objects.create_user("alice"),
        "elsewhere": User.objects.create_user("bob"),
        "agent": User.objects.create_user("kubelet-a"),
        "nobody": User.objects.create_user("carol"),
    }
    users["member"].groups.add(team_a)
    users["elsewhere"].groups.add(team_b)
    users["agent"].groups.add(Group.objects.get_or_create(name="node-agents")[0])
    NodeAgentBinding.objects.create(user=users["agent"], cluster=cluster, pool="pool-a")
    # a change request of each side, filed by its team member for its own queue (open: it can be decided)
    for side, user in (("a", users["member"]), ("b", users["elsewhere"])):
        queue = "team-a1" if side == "a" else "team-b"
        change = {"op": "update", "kind": "queue", "name": queue, "spec": {"weight": 3}}
        ids[f"cr-{side}"] = change_requests.file_request(user, [change]).pk
        ids[f"replay-{side}"] = ReplayRun.objects.create(
            requester=user, cluster=cluster, window="1h", since=timezone.now(), until=timezone.now(), changes=[change]
        ).pk  # queued: it can be cancelled
    clients = {"anonymous": APIClient()}
    for role, user in users.items():
        clients[role] = APIClient()
        clients[role].credentials(HTTP_AUTHORIZATION=f"Token {create_token(user, 'test')[1]}")
    return World(ids, clients)


# -- what each operation is called with ----------------------------------------------------------------------

SIDE = {"own": "a", "foreign": "b"}
MANIFEST = """
apiVersion: v1
kind: Node
metadata: {name: sim-1}
status: {allocatable: {cpu: "4", memory: 8Gi}}
"""


def _params(op: str, path: str, target: str, ids: dict[str, int]) -> dict[str, str]:
    """The path parameters of ``path`` addressing the target's object."""
    s = SIDE[target]
    resource = path.split("/")[3]
    names = {
        "queues": f"team-{s}1" if s == "a" else "team-b",
        "quota-groups": f"g-spare-{s}"
        if op == "v1_quota_groups_destroy"
        else ("g-team-a1" if s == "a" else "g-team-b"),
        "namespaces": f"ns-{s}",
        "resource-flavors": f"flavor-{s}",
        "clusters": "default",
        "nodes": f"n-{s}",
        "teams": f"team-{s}",
    }
    numbers = {
        "podgroups": ids[f"pg-{s}"],
        "pods": ids[f"pod-{s}"],
        "evictions": ids[f"ev-{s}"],
        "samples": ids[f"sample-{s}"],
        "sessions": ids["session"],
        "security-events": ids[f"security-{s}"],
        "change-requests": ids[f"cr-{s}"],
        "replays": ids[f"replay-{s}"],
    }
    if "{name}" in path:
        return {"name": names[resource]}
    if "{key}" in path:  # a LocalQueue: <namespace>/<name>
        return {"key": f"ns-{s}/lq-{s}"}
    if "{id}" in path:
        return {"id": str(numbers[resource])}
    return {}


def _body(op: str, target: str) -> tuple[Any, str]:
    """The request body for ``op`` aimed at ``target``, and a query string."""
    s = SIDE[target]
    queue = "team-a1" if s == "a" else "team-b"
    group = "g-team-a1" if s == "a" else "g-team-b"
    bodies: dict[str, Callable[[], tuple[Any, str]]] = {
        "v1_queues_create": lambda: ({"name": "new-q", "parent": f"dept-{s}"}, ""),
        "v1_queues_update": lambda: ({"name": queue, "parent": f"dept-{s}", "weight": 2}, ""),
        "v1_queues_partial_update": lambda: ({"weight": 2}, ""),
        "v1_queues_destroy": lambda: (None, "?force=true"),
        "v1_quota_groups_create": lambda: ({"name": "new-g", "parent": "g-dept-a" if s == "a" else "root"}, ""),
        "v1_quota_groups_update": lambda: (
            {"name": group, "parent": "g-dept-a" if s == "a" else "root", "min": {"cpu": "4"}, "max": {"cpu": "8"}},
            "",
        ),
        "v1_quota_groups_partial_update": lambda: ({"max": {"cpu": "6"}}, ""),
        "v1_namespaces_create": lambda: ({"name": "ns-new", "default_queue": queue}, ""),
        "v1_namespaces_update": lambda: ({"name": f"ns-{s}", "weight": 3, "default_queue": queue}, ""),
        "v1_namespaces_partial_update": lambda: ({"weight": 3}, ""),
        "v1_resource_flavors_create": lambda: ({"name": "flavor-new", "node_labels": {"pool": "new"}}, ""),
        "v1_resource_flavors_update": lambda: ({"name": f"flavor-{s}", "node_labels": {"pool": s}}, ""),
        "v1_resource_flavors_partial_update": lambda: ({"topology_name": "default"}, ""),
        "v1_local_queues_create": lambda: ({"namespace": f"ns-{s}", "name": "lq-new", "queue": queue}, ""),
        "v1_local_queues_update": lambda: (
            {"namespace": f"ns-{s}", "name": f"lq-{s}", "queue": queue, "weight": "0.5"},
            "",
        ),
        "v1_local_queues_partial_update": lambda: ({"weight": "0.5"}, ""),
        "v1_clusters_create": lambda: ({"name": "c2"}, ""),
        "v1_clusters_update": lambda: ({"name": "default", "description": "x"}, ""),
        "v1_clusters_partial_update": lambda: ({"description": "x"}, ""),
        "v1_clusters_destroy": lambda: (None, "?force=true"),  # it holds nodes: 409 cluster_not_empty without
        "v1_nodes_create": lambda: ({"name": f"n-new-{s}", "pool": f"pool-{s}", "allocatable": {"cpu": "4"}}, ""),
        "v1_nodes_update": lambda: ({"name": f"n-{s}", "cluster": "default", "allocatable": {"cpu": "16"}}, ""),
        "v1_nodes_partial_update": lambda: ({"unschedulable": True}, ""),
        "v1_nodes_heartbeat_create": lambda: ({"allocatable": {"cpu": "9999"}}, ""),
        "v1_podgroups_create": lambda: ({"namespace": f"ns-{s}", "name": "new-pg", "queue": queue}, ""),
        # (not the priority: only admins change that of an existing job, test_job_priority.py)
        "v1_podgroups_update": lambda: (
            {"namespace": f"ns-{s}", "name": f"pg-{s}", "queue": queue, "min_member": 1},
            "",
        ),
        "v1_podgroups_partial_update": lambda: ({"min_member": 1}, ""),
        "v1_pods_create": lambda: (
            {"namespace": f"ns-{s}", "name": "new-pod", "podgroup": f"pg-{s}", "request": {"cpu": "1"}},
            "",
        ),
        "v1_pods_update": lambda: ({"namespace": f"ns-{s}", "name": f"pod-{s}", "labels": {"x": "y"}}, ""),
        "v1_pods_partial_update": lambda: ({"labels": {"x": "y"}}, ""),
        "v1_pods_status_create": lambda: ({"status": "Succeeded"}, ""),
        "v1_pods_gone_create": lambda: ({}, ""),
        "v1_whatif_create": lambda: (
            {"changes": [{"op": "update", "kind": "queue", "name": queue, "spec": {"weight": 2}}]},
            "",
        ),
        "v1_simulate_create": lambda: ({"manifests": MANIFEST}, ""),
        "v1_export_retrieve": lambda: (None, "?format=volcano"),
        "v1_trace_retrieve": lambda: (None, "?since=2020-01-01T00:00:00Z&cluster=default"),
        "v1_sessions_recorded_retrieve": lambda: (None, "?cluster=default"),
        "v1_sessions_replay_at_retrieve": lambda: (None, "?cluster=default&at=2100-01-01T00:00:00Z"),
        "v1_audit_retrieve": lambda: (None, f"?team=team-{s}"),
        "v1_change_requests_create": lambda: (
            {"changes": [{"op": "update", "kind": "queue", "name": queue, "spec": {"weight": 4}}]},
            "",
        ),
        "v1_replays_create": lambda: (
            {"changes": [{"op": "update", "kind": "queue", "name": queue, "spec": {"weight": 4}}], "window": "1d"},
            "",
        ),
        "v1_change_requests_approve_create": lambda: ({"comment": "ok"}, ""),
        "v1_change_requests_reject_create": lambda: ({"comment": "no"}, ""),
        "v1_change_requests_withdraw_create": lambda: ({"comment": "never mind"}, ""),
    }
    return bodies[op]() if op in bodies else (None, "")


def _operations(schema: dict[str, Any]) -> dict[str, tuple[str, str]]:
    out = {}
    for path, item in schema["paths"].items():
        for method, op in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                out[op["operationId"]] = (method, path)
    return out


def test_every_operation_answers_each_role_as_the_matrix_says() -> None:
    world = _build()
    schema = world.clients["admin"].get("/api/schema/?format=json")
    assert schema.status_code == 200
    operations = _operations(schema.json())
    assert set(operations) - set(EXPECTED) == set(), "operations with no row in EXPECTED: a new endpoint?"
    assert set(EXPECTED) - set(operations) == set(), "rows of EXPECTED that the schema no longer has"

    surprises: list[str] = []
    cells = 0
    for op, (method, path) in sorted(operations.items()):
        expected = _parse(EXPECTED[op])
        for target in TARGETS:
            url = path.format(**_params(op, path, target, world.ids))
            body, query = _body(op, target)
            for role in ROLES:
                call = getattr(world.clients[role], method)
                with transaction.atomic() if method != "get" else nullcontext():  # reads change nothing
                    response = call(url + query, body, format="json") if body is not None else call(url + query)
                    if method != "get":
                        transaction.set_rollback(True)
                # (the value cache needs no clearing: its fingerprint is the tables' counts and newest updates,
                # which the rollback restores, so values cached inside a cell never match afterwards)
                cells += 1
                if response.status_code not in expected[(role, target)]:
                    detail = response.content[:160].decode(errors="replace")
                    surprises.append(
                        f"{op} {method.upper()} {url}{query} as {role} ({target}): got {response.status_code}, "
                        f"expected {'/'.join(map(str, sorted(expected[(role, target)])))}: {detail}"
                    )
    assert not surprises, f"{len(surprises)} of {cells} cells differ from the matrix:\n" + "\n".join(surprises)
    assert cells == len(operations) * len(ROLES) * len(TARGETS)


# Operations where a team member succeeds whatever the target: collections (filtered to what it may read), the
# nested trees, and objects that belong to no team (the cluster, its nodes, scheduling sessions, simulate, Kueue's
# ResourceFlavors).
NOT_ABOUT_A_TEAM = {
    "v1_queues_list", "v1_queues_tree_list", "v1_quota_groups_list", "v1_quota_groups_tree_list",
    "v1_namespaces_list", "v1_clusters_list", "v1_clusters_retrieve", "v1_nodes_list", "v1_nodes_retrieve",
    "v1_podgroups_list", "v1_pods_list", "v1_sessions_list", "v1_sessions_retrieve", "v1_sessions_decisions_list",
    "v1_evictions_list", "v1_samples_list", "v1_simulate_create", "v1_change_requests_list", "v1_replays_list",
    "v1_resource_flavors_list", "v1_resource_flavors_retrieve", "v1_local_queues_list",
}  # fmt: skip
AGENT_API = {"v1_nodes_create", "v1_nodes_heartbeat_create", "v1_nodes_pods_list", "v1_pods_status_create",
             "v1_pods_gone_create"}  # fmt: skip


def test_the_table_itself_gives_no_role_more_than_its_own() -> None:
    """A check of the table, so that a careless edit of a row cannot grant what the rules forbid: anonymous is 401
    everywhere, a user in no team never succeeds, an agent succeeds only on the agent API of its own node, and a
    team member never succeeds on another team's object."""
    assert set(EXPECTED) >= NOT_ABOUT_A_TEAM | AGENT_API
    for op, row in EXPECTED.items():
        cells = _parse(row)
        ok = {role_target: any(c < 400 for c in codes) for role_target, codes in cells.items()}
        assert cells[("anonymous", "own")] == cells[("anonymous", "foreign")] == {401}, op
        assert not ok[("nobody", "own")] and not ok[("nobody", "foreign")], op
        assert not ok[("agent", "foreign")], op
        assert ok[("agent", "own")] == (op in AGENT_API), op
        if op not in NOT_ABOUT_A_TEAM:
            assert not ok[("member", "foreign")] and not ok[("elsewhere", "own")], op
