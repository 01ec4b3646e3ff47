"""The Kubernetes adapter on Kueue objects with a resource in several ResourceFlavors (issue 28 item 7): the rows keep
one flavor per resource, so the flavors' quota is added up on the queue, and the nodes and pods keep their plain
resources (``engine.flavors.unflavored``), where before the resource was left out of the queue."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.utils import timezone

from engine.manifests.kueue import KUEUE_POLICY

TEXT = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: on-demand}
spec: {nodeLabels: {type: on-demand}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: spot}
spec: {nodeLabels: {type: spot}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - {name: on-demand, resources: [{name: cpu, nominalQuota: 4}]}
    - {name: spot, resources: [{name: cpu, nominalQuota: 8}]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: team-a, name: lq}
spec: {clusterQueue: team-a}
---
apiVersion: v1
kind: Node
metadata: {name: spot-1, labels: {type: spot}}
status: {allocatable: {cpu: "8", pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: team-a, labels: {kueue.x-k8s.io/queue-name: lq}}
spec: {nodeName: spot-1, containers: [{name: c, resources: {requests: {cpu: "2"}}}]}
status: {phase: Running}
"""


@pytest.fixture
def kueue_cluster(db: Any) -> Any:
    from quotas import services
    from scheduling.models import Cluster

    services.ensure_builtins()
    return Cluster.objects.create(
        name="kf", source="kubernetes", tree_source="kubernetes", scheduler_policy=KUEUE_POLICY.to_yaml()
    )


def test_the_adapter_adds_a_resources_flavors_up(kueue_cluster: Any) -> None:
    from quotas.models import Queue
    from scheduling.kube.mirror_in import mirror
    from scheduling.models import Node, Pod

    report = mirror(kueue_cluster, list(yaml.safe_load_all(TEXT)), timezone.now())
    assert not report.problems, report.problems
    assert Queue.objects.get(name="team-a").deserved == {"cpu": 12_000}  # 4 on-demand + 8 spot
    assert Node.objects.get(name="spot-1").allocatable == {"cpu": 8_000, "pods": 110_000}
    assert Pod.objects.get(name="p").request == {"cpu": 2_000}
