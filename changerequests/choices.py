"""The change requests' statuses."""

from django.db import models


class RequestStatus(models.TextChoices):
    """Where a request stands. Approving applies it in the same transaction, so an approved request is ``applied``
        (there is no resting "approved but not applied" state): ``open`` -> ``applied`` | ``rejected`` | ``withdrawn`` |
        ``stale`` (the tree moved under it so that it no longer applies as asked; nothing was written). A loan that was
    applied becomes ``returned`` once its amounts went back at its end (``changerequests.loans``)."""

    OPEN = "open", "open"
    APPLIED = "applied", "approved and applied"
    REJECTED = "rejected", "rejected"
    WITHDRAWN = "withdrawn", "withdrawn"
    STALE = "stale", "stale"
    RETURNED = "returned", "lent and returned"  # a loan after its end: the amounts went back


DECIDED = frozenset(
    {
        RequestStatus.APPLIED,
        RequestStatus.REJECTED,
        RequestStatus.WITHDRAWN,
        RequestStatus.STALE,
        RequestStatus.RETURNED,
    }
)
