"""Replay runs (issue 29 item 5): "replay the last days with these changes", started from the what-if page, a change
request or the API, run by a Celery task on the ``replay`` queue (``planning.tasks.run_replay``), its result kept for
``FAIRWAY_REPLAY_RETENTION_DAYS``. The logic lives in ``planning.replay``."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from engine import wording


class ReplayState(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


#: the states a run leaves no more
FINISHED_STATES = (ReplayState.DONE, ReplayState.FAILED, ReplayState.CANCELLED)
ACTIVE_STATES = (ReplayState.QUEUED, ReplayState.RUNNING)


class ReplayRun(models.Model):
    """One replay of a cluster's recent window (``since`` .. ``until``, fixed when it was asked) with ``changes`` (the
    what-if change language) applied to the tree at the window's start, the baseline and the proposal side by side.
    ``progress``: the fraction of virtual time done over both runs (0..1); ``result``: the replay's document
    (``engine.replay.replay_document``'s shape) once done; ``error``: one sentence when it failed."""

    requester = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="replay_runs"
    )
    cluster = models.ForeignKey("scheduling.Cluster", on_delete=models.CASCADE, related_name="replay_runs")
    change_request = models.ForeignKey(
        "changerequests.ChangeRequest",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="replay_runs",
        help_text="The change request whose changes are the proposal, when started from one.",
    )
    window = models.CharField(max_length=8, help_text='The span replayed, back from when it was asked ("7d").')
    since = models.DateTimeField()
    until = models.DateTimeField()
    changes = models.JSONField()
    summary = models.CharField(max_length=500, blank=True)
    state = models.CharField(max_length=10, choices=ReplayState.choices, default=ReplayState.QUEUED)
    progress = models.FloatField(default=0.0)
    phase = models.CharField(max_length=80, blank=True, help_text="What the task is doing now.")
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [models.Index(fields=["state", "-created"]), models.Index(fields=["requester", "-created"])]

    def __str__(self) -> str:
        return f"replay #{self.pk} of {self.window} ({self.state})"

    @property
    def is_active(self) -> bool:
        return self.state in ACTIVE_STATES

    @property
    def window_text(self) -> str:
        """The span replayed in words: "day", "7 days", "6 hours" (as in "the last day")."""
        text = wording.spelled_duration((self.until - self.since).total_seconds())
        return text[2:] if text.startswith("1 ") and text.count(" ") == 1 else text


class StartEstimates(models.Model):
    """The start estimates of a cluster's waiting jobs (issue 29 item 6; ``planning.estimates``): one row per cluster,
    replaced by each round. ``jobs``: ``{"ns/name": {"p50", "p90", "later_than", "never", "draws"}}``, seconds from
    ``computed`` (null: not by then, ``later_than`` says how far the draws looked); ``requested``: when a reader last
    asked the ``estimates`` worker for a new round."""

    cluster = models.OneToOneField("scheduling.Cluster", on_delete=models.CASCADE, related_name="start_estimates")
    computed = models.DateTimeField(help_text="The moment of the state the estimates start from.")
    cpu_seconds = models.FloatField(default=0.0, help_text="CPU the round took.")
    jobs = models.JSONField(default=dict)
    no_history = models.BooleanField(default=False, help_text="No finished job was recorded to draw runtimes from.")
    requested = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"start estimates of {self.cluster_id} at {self.computed:%Y-%m-%d %H:%M:%S}"
