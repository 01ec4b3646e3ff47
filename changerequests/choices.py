"""The change requests' statuses."""

from django.db import models


class RequestStatus(models.TextChoices):
    """Where a request stands. Approving applies it in the same transaction, so an approved request is ``applied``
    (there is no resting "approved but not applied" state): ``open`` -> ``applied`` | ``rejected`` | ``withdrawn`` |
    ``stale`` (the tree moved under it so that it no longer applies as asked; nothing was written)."""

    OPEN = "open", "open"
    APPLIED = "applied", "approved and applied"
    REJECTED = "rejected", "rejected"
    WITHDRAWN = "withdrawn", "withdrawn"
    STALE = "stale", "stale"


DECIDED = frozenset({RequestStatus.APPLIED, RequestStatus.REJECTED, RequestStatus.WITHDRAWN, RequestStatus.STALE})
