"""Which nodes a node-agent credential may act for (``NodeAgentBinding``).

* Staff act for every node.
* A user in the ``node-agents`` group acts for the nodes its bindings name: a node of a cluster by name, or every
  node of the cluster whose ``pool`` is a pool it is bound to. It registers only such nodes (by name, or with the
  pool it is bound to), heartbeats them, lists their pods, and reports the status of — or confirms gone — only
  pods placed on them.
* Anyone else is no agent at all.

The simulated agent (``scheduling.agent.agent_tick``) runs inside the worker and writes rows directly; none of this
applies to it.
"""

from __future__ import annotations

from typing import Any

from scheduling.models import Cluster, Node, NodeAgentBinding, Pod

NODE_AGENTS_GROUP = "node-agents"


def is_node_agent(user: Any) -> bool:
    """Admins, and users in the ``node-agents`` group, may call the node-agent API at all."""
    if not (user and user.is_authenticated):
        return False
    return bool(user.is_staff) or user.groups.filter(name=NODE_AGENTS_GROUP).exists()


def _bindings(user: Any, cluster_id: int) -> list[NodeAgentBinding]:
    return list(NodeAgentBinding.objects.filter(user=user, cluster_id=cluster_id))


def may_act_for(user: Any, node: Node) -> bool:
    """Whether ``user`` may heartbeat ``node``, list its pods and report for the pods on it."""
    if user.is_staff:
        return True
    return any(b.node == node.name or (b.pool and b.pool == node.pool) for b in _bindings(user, node.cluster_id))


def may_register(user: Any, cluster: Cluster, name: str, pool: str) -> bool:
    """Whether ``user`` may register node ``name`` (in ``pool``, possibly empty) in ``cluster``."""
    if user.is_staff:
        return True
    return any(b.node == name or (b.pool and b.pool == pool) for b in _bindings(user, cluster.pk))


def bound_to(user: Any, cluster_id: int | None = None) -> str:
    """What the agent is bound to, for messages: ``node n1 (cluster c1), pool gpu (cluster c1)`` or ``nothing``."""
    qs = NodeAgentBinding.objects.filter(user=user).select_related("cluster")
    if cluster_id is not None:
        qs = qs.filter(cluster_id=cluster_id)
    parts = [f"{'node ' + b.node if b.node else 'pool ' + b.pool} (cluster {b.cluster.name})" for b in qs]
    return ", ".join(parts) or "nothing"


def refusal(user: Any, node_name: str, cluster: Cluster, pool: str = "") -> str:
    """The 403 message for an agent acting for a node it is not bound to (it names the node)."""
    where = f"node {node_name} (cluster {cluster.name}" + (f", pool {pool})" if pool else ")")
    return (
        f"agent {user.get_username()} is not bound to {where}; it may act only for the nodes it is bound to: "
        f"{bound_to(user, cluster.pk)}"
    )


def pod_refusal(user: Any, pod: Pod) -> str:
    """The 403 message for an agent reporting for a pod that is not on one of its nodes."""
    uid = f"{pod.namespace.name}/{pod.name}"
    if pod.node is None:
        return (
            f"pod {uid} is on no node; agent {user.get_username()} may report only for pods on the nodes it is "
            f"bound to: {bound_to(user, pod.cluster_id)}"
        )
    return f"pod {uid} is on node {pod.node.name}: " + refusal(user, pod.node.name, pod.cluster, pod.node.pool)
