"""One active adapter per cluster: leader election on a ``coordination.k8s.io/v1`` Lease, as client-go's
``leaderelection`` with a ``LeaseLock`` does.

The holder renews ``spec.renewTime`` every ``renew_seconds``; another candidate takes the lease only once
``renewTime + leaseDurationSeconds`` has passed, by replacing the Lease with the ``resourceVersion`` it read, so of
two candidates racing for an expired lease one write succeeds and the other gets 409 Conflict and stands by. A holder
that cannot renew (the API server unreachable, or it lost the race) stops acting at once, before its lease expires
for the others. Times are read from this process's clock, as client-go does (the observed record's age, not the
holder's timestamps, decides expiry), so clocks need not agree between candidates.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime

from kubernetes import client as k8s

__all__ = ["LeaseElector"]

logger = logging.getLogger(__name__)


class LeaseElector:
    """``ensure()`` answers whether this candidate holds the lease now, acquiring or renewing it when due."""

    def __init__(
        self,
        api: k8s.ApiClient,
        *,
        namespace: str,
        name: str,
        identity: str,
        lease_seconds: float = 15.0,
        renew_seconds: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.api = k8s.CoordinationV1Api(api)
        self.namespace, self.name, self.identity = namespace, name, identity
        self.lease_seconds, self.renew_seconds, self.clock = lease_seconds, renew_seconds, clock
        self.leading = False
        self._observed: tuple[str, str, int] | None = None  # (holder, renewTime, leaseTransitions) last seen
        self._observed_at = 0.0
        self._renewed_at = float("-inf")

    def ensure(self) -> bool:
        """Acquire or renew when due; ``True`` while this candidate is the leader."""
        now = self.clock()
        if self.leading and now - self._renewed_at < self.renew_seconds:
            return True
        try:
            self.leading = self._try(now)
        except k8s.ApiException as exc:
            if exc.status not in (404, 409):
                logger.warning("lease %s/%s: %s", self.namespace, self.name, exc)
            self.leading = False
        except Exception as exc:  # the API server unreachable: never act without a renewed lease
            logger.warning("lease %s/%s unreachable: %s", self.namespace, self.name, exc)
            self.leading = False
        return self.leading

    def _try(self, now: float) -> bool:
        try:
            lease = self.api.read_namespaced_lease(self.name, self.namespace)
        except k8s.ApiException as exc:
            if exc.status != 404:
                raise
            self.api.create_namespaced_lease(self.namespace, self._body(None, 0))
            self._renewed_at = now
            return True
        spec = lease.spec or k8s.V1LeaseSpec()
        holder = spec.holder_identity or ""
        record = (holder, str(spec.renew_time), spec.lease_transitions or 0)
        if record != self._observed:
            self._observed, self._observed_at = record, now
        duration = spec.lease_duration_seconds or self.lease_seconds
        if holder and holder != self.identity and now - self._observed_at < duration:
            return False  # held by another candidate that renewed within its duration
        transitions = (spec.lease_transitions or 0) + (0 if holder == self.identity else 1)
        body = self._body(lease.metadata.resource_version, transitions, acquired=spec.acquire_time)
        if holder != self.identity:
            body.spec.acquire_time = None  # set below: a new term starts now
        self.api.replace_namespaced_lease(self.name, self.namespace, self._fill(body, holder != self.identity))
        self._renewed_at = now
        if holder != self.identity:
            logger.info("lease %s/%s: %s is now the leader", self.namespace, self.name, self.identity)
        return True

    def _body(self, version: str | None, transitions: int, acquired: datetime | None = None) -> k8s.V1Lease:
        stamp = datetime.now(UTC)
        return k8s.V1Lease(
            metadata=k8s.V1ObjectMeta(name=self.name, namespace=self.namespace, resource_version=version),
            spec=k8s.V1LeaseSpec(
                holder_identity=self.identity,
                lease_duration_seconds=max(1, round(self.lease_seconds)),
                acquire_time=acquired or stamp,
                renew_time=stamp,
                lease_transitions=transitions,
            ),
        )

    @staticmethod
    def _fill(body: k8s.V1Lease, new_term: bool) -> k8s.V1Lease:
        if new_term or body.spec.acquire_time is None:
            body.spec.acquire_time = body.spec.renew_time
        return body

    def release(self) -> None:
        """Give the lease up (on a clean stop), so a stand-by takes over without waiting for it to expire."""
        if not self.leading:
            return
        self.leading = False
        try:
            lease = self.api.read_namespaced_lease(self.name, self.namespace)
            if lease.spec is not None and lease.spec.holder_identity == self.identity:
                lease.spec.holder_identity = None
                lease.spec.lease_duration_seconds = 1
                self.api.replace_namespaced_lease(self.name, self.namespace, lease)
        except Exception as exc:
            logger.warning("lease %s/%s: could not release: %s", self.namespace, self.name, exc)
