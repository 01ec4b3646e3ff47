"""Re-encrypt every secret stored encrypted (the clusters' kubeconfigs) with the first key of FAIRWAY_SECRET_KEYS.

Rotation (docs/security.md): put a new key first in FAIRWAY_SECRET_KEYS (keep the old ones after it), restart,
run this, then remove the old keys."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from scheduling.models import Cluster
from security.crypto import SecretUnreadable, rotate


class Command(BaseCommand):
    help = "Re-encrypt the stored kubeconfigs with the first key of FAIRWAY_SECRET_KEYS (run after adding a new key)."

    def handle(self, *args: Any, **options: Any) -> None:
        count = 0
        with transaction.atomic():  # all or nothing: no secret left under a key about to be removed
            for cluster in Cluster.objects.select_for_update().exclude(kubeconfig_encrypted="").order_by("pk"):
                try:
                    rotated = rotate(cluster.kubeconfig_encrypted)
                except SecretUnreadable as exc:
                    raise CommandError(f"cluster {cluster.name}: {exc}; nothing was re-encrypted") from None
                Cluster.objects.filter(pk=cluster.pk).update(kubeconfig_encrypted=rotated)
                count += 1
        self.stdout.write(f"re-encrypted {count} kubeconfig{'' if count == 1 else 's'} with the first key")
