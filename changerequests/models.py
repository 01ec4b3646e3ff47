"""A change request: a team lead's proposal to change its own subtree of the queue or quota tree, in the what-if
change language (``engine.changes``), with the what-if it had when filed, waiting for a department lead or an admin
to approve (and so apply) or reject it. The logic lives in ``changerequests.services``."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from simple_history.models import HistoricalRecords

from changerequests.choices import RequestStatus


class ChangeRequest(models.Model):
    """One request. ``changes`` is the list of changes as filed (the change language); ``base`` records, per change
    that edits an existing node, the node's version and the values of the fields it changes when the request was
    filed, so that approval can tell whether the tree moved under the request; ``whatif`` holds the values before
    and after of the nodes the request changes (as last evaluated); ``needs_room`` the rule messages that held the
    request back when it was filed (the parent has no room left: the approver has to make some)."""

    requester = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="change_requests"
    )
    cluster = models.CharField(max_length=63, help_text="The cluster whose values the what-if was computed on.")
    summary = models.CharField(max_length=500)
    reason = models.TextField(blank=True, help_text="Why the requester asks.")
    changes = models.JSONField()
    base = models.JSONField(default=list)
    trees_revision = models.PositiveBigIntegerField(help_text="The trees' revision when the request was filed.")
    whatif = models.JSONField(default=dict)
    needs_room = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=12, choices=RequestStatus.choices, default=RequestStatus.OPEN)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="reviewed_requests"
    )
    comment = models.TextField(blank=True, help_text="The reviewer's (or the withdrawing requester's) comment.")
    outcome = models.TextField(blank=True, help_text="What happened on the decision: what was applied, or why stale.")
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)
    decided = models.DateTimeField(null=True, blank=True)
    loan = models.JSONField(
        null=True,
        blank=True,
        help_text="A loan's terms (changerequests.loans): kind, from, to, field, amounts, seconds.",
    )
    loan_until = models.DateTimeField(null=True, blank=True, db_index=True, help_text="When an applied loan ends.")
    returned = models.DateTimeField(null=True, blank=True, help_text="When the loan's amounts went back.")
    return_problem = models.TextField(blank=True, help_text="Why a loan past its end is not returned yet.")
    history = HistoricalRecords(excluded_fields=["updated"])

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [models.Index(fields=["status", "-created"])]

    def __str__(self) -> str:
        return f"change request #{self.pk}: {self.summary}"

    @property
    def is_open(self) -> bool:
        return self.status == RequestStatus.OPEN

    @property
    def is_loan(self) -> bool:
        return self.loan is not None
