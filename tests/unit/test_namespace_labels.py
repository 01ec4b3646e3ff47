"""A namespace's labels (what Kueue's ``namespaceSelector`` matches): checked as Kubernetes checks them, read from a
Namespace object without Kubernetes' implied name label, written back by the exports, and a namespace pickled by an
engine before the field (a session record) still loads."""

from __future__ import annotations

import pickle

import pytest

from engine import rules
from engine.manifests import load_manifests
from engine.manifests.export import export_trees
from engine.objects import NamespaceInfo

NAMESPACE = """---
apiVersion: v1
kind: Namespace
metadata:
  name: nlp
  labels: {team: nlp, kubernetes.io/metadata.name: nlp, example.com/tier: gold}
"""


@pytest.mark.parametrize(
    ("labels", "field", "says"),
    [
        ({"team": "a", "example.com/tier": "gold", "empty": "", "a.b_c-d": "X.y_z-1"}, None, None),
        ({"bad key": "x"}, "labels.bad key", "is not a label key"),
        ({"-team": "x"}, "labels.-team", "is not a label key"),
        ({"x" * 64: "v"}, "labels." + "x" * 64, "is not a label key"),
        ({"Not_A.Domain/k": "v"}, "labels.Not_A.Domain/k", "the prefix before '/' must be a DNS-1123 subdomain"),
        ({"/k": "v"}, "labels./k", "the prefix before '/'"),
        ({"team": "-a"}, "labels.team", "is not a label value"),
        ({"team": "v" * 64}, "labels.team", "is not a label value"),
        ({"team": 3}, "labels.team", "the value must be a string, got int"),
        ({"team": None}, "labels.team", "the value must be a string, got null"),
        (["team"], "labels", "must be an object of label keys to values, got list"),
        ({f"k{i}": "v" for i in range(rules.common.MAX_LABELS + 1)}, "labels", "at most 64 are allowed"),
    ],
)
def test_labels_are_checked_as_kubernetes_checks_them(labels: object, field: str | None, says: str | None) -> None:
    errors = rules.validate_labels(labels)
    if field is None:
        assert errors == []
        return
    assert [e.field for e in errors] == [field]
    assert says in errors[0].message and errors[0].message.startswith(field)


def test_the_reader_keeps_a_namespace_s_labels_without_the_implied_name_label() -> None:
    snapshot = load_manifests([("ns.yaml", NAMESPACE)]).snapshot
    info = snapshot.namespaces["nlp"]
    assert info.labels == (("example.com/tier", "gold"), ("team", "nlp"))
    (doc,) = [d for d in export_trees(snapshot, "volcano") if d["kind"] == "Namespace"]
    assert doc["metadata"]["labels"] == {"example.com/tier": "gold", "team": "nlp"}


def test_a_namespace_pickled_before_labels_existed_loads_without_labels() -> None:
    older = NamespaceInfo.__new__(NamespaceInfo)
    older.__setstate__(["nlp", 3, "q", None])  # the four fields an engine before labels wrote
    assert (older.name, older.weight, older.queue, older.hard, older.labels) == ("nlp", 3, "q", None, ())
    now = NamespaceInfo(name="nlp", labels=(("team", "nlp"),))
    assert pickle.loads(pickle.dumps(now)) == now
