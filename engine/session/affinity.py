"""A pod's required node affinity over a whole node table, vectorised (kube-scheduler's ``NodeAffinity`` filter).

``affinity_mask`` gives the rows whose node passes the terms as Kubernetes reads them
(``k8s.io/component-helpers/scheduling/corev1/nodeaffinity``, the scalar ``engine.objects.affinity_admits``): the
terms are ORed and each term's requirements ANDed; a term without any requirement matches no node; ``NotIn`` and
``DoesNotExist`` match a node without the label; ``Gt`` and ``Lt`` compare 64-bit integers, and a label that is not
one matches neither; a ``matchFields`` entry compares the node's name. One label column per key
(``NodeTable.label_column``), one integer column per key compared with ``Gt`` / ``Lt``, made once per node table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from engine.objects import NodeAffinity, NodeInfo, NodeSelectorRequirement, go_int64
from engine.wording import plural

if TYPE_CHECKING:
    from engine.session.session import NodeTable

BOOL = npt.NDArray[np.bool_]


def affinity_mask(table: NodeTable, terms: NodeAffinity) -> BOOL:
    """The rows of ``table`` whose node passes the required node affinity ``terms`` (every row when there is none)."""
    n = len(table)
    if not terms:
        return np.ones(n, dtype=np.bool_)
    out: BOOL = np.zeros(n, dtype=np.bool_)
    for term in terms:
        if not term:
            continue  # Kubernetes: an empty term selects no node
        met: BOOL = np.ones(n, dtype=np.bool_)
        for requirement in term:
            met &= _requirement_mask(table, requirement)
        out |= met
    return out


def _requirement_mask(table: NodeTable, e: NodeSelectorRequirement) -> BOOL:
    n = len(table)
    if e.match_field:  # metadata.name In / NotIn one name
        hit: BOOL = np.zeros(n, dtype=np.bool_)
        for name in e.values:
            row = table.index.get(name)
            if row is not None:
                hit[row] = True
        return hit if e.operator == "In" else ~hit
    if e.operator in ("Gt", "Lt"):
        return _compare(table, e)
    column = table.label_column(e.key)
    if e.operator in ("Exists", "DoesNotExist"):
        present: BOOL = np.fromiter((v is not None for v in column.tolist()), dtype=np.bool_, count=n)
        return present if e.operator == "Exists" else ~present
    found: BOOL = np.zeros(n, dtype=np.bool_)
    for value in e.values:
        found |= (column == value).astype(np.bool_)
    return found if e.operator == "In" else ~found


def _compare(table: NodeTable, e: NodeSelectorRequirement) -> BOOL:
    bound = go_int64(e.values[0])
    if bound is None:
        return np.zeros(len(table), dtype=np.bool_)  # the requirement does not parse in Kubernetes: no match
    numbers, valid = table.derived(f"affinity-int:{e.key}", lambda infos: _integers(infos, e.key))
    out: BOOL = valid & (numbers > bound if e.operator == "Gt" else numbers < bound)
    return out


def _integers(infos: list[NodeInfo], key: str) -> tuple[npt.NDArray[np.int64], BOOL]:
    """Label ``key`` of each node as a 64-bit integer, and whether it is one (Go's ``strconv.ParseInt(v, 10, 64)``)."""
    numbers = np.zeros(len(infos), dtype=np.int64)
    valid: BOOL = np.zeros(len(infos), dtype=np.bool_)
    for i, node in enumerate(infos):
        number = go_int64(node.labels.get(key))
        if number is not None:
            numbers[i], valid[i] = number, True
    return numbers, valid


def predicates_named(terms: NodeAffinity) -> str:
    """The predicates a refusal names for a pod: its node affinity among them only when it has one."""
    return "node selector, node affinity, taints, cordon" if terms else "node selector, taints, cordon"


def unmatched_clause(table: NodeTable, terms: NodeAffinity) -> str:
    """How many ready nodes the required node affinity ``terms`` rule out, for a refusal's sentence
    (``"; node affinity: 3 nodes do not match"``); '' when it rules out none (or the pod has none)."""
    if not terms:
        return ""
    count = int((table.ready & ~affinity_mask(table, terms)).sum())
    if count == 0:
        return ""
    return f"; node affinity: {plural(count, 'node')} {'does' if count == 1 else 'do'} not match"
