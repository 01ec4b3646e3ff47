"""scheduler-plugins' ElasticQuota (``scheduling.x-k8s.io``): one flat quota per namespace.

Kueue's objects are not read (``load_manifests`` skips them with a warning).
"""

from __future__ import annotations

from engine.manifests.common import _BuilderBase, _Doc, _rl
from engine.objects import QuotaGroupSpec


class SchedulerPluginsReaders(_BuilderBase):
    def _flat_elastic_quota(self, doc: _Doc) -> None:
        # One ElasticQuota per namespace, flat; the quota group is named like the namespace.
        spec = doc.spec
        quota_min = _rl(spec.get("min"), "spec.min")
        quota_max = _rl(spec.get("max"), "spec.max")
        self._add_group(QuotaGroupSpec(name=doc.namespace, min=quota_min, max=quota_max), namespaces=())
