"""The scheduling models' choices, derived from the engine's enums so that each value is written once."""

from django.db import models

from engine.objects import PodGroupPhase as EnginePodGroupPhase
from engine.objects import TaskStatus
from engine.vocabulary import FINISHED_STATUSES

PodGroupPhase = models.TextChoices("PodGroupPhase", [(p.name, p.value) for p in EnginePodGroupPhase])

# The statuses a pod row can hold: every engine task status but Unknown, which only a manifest can carry.
PodStatus = models.TextChoices("PodStatus", [(s.name, s.value) for s in TaskStatus if s is not TaskStatus.UNKNOWN])

# A node agent's listing of its node: the pods it must run (bound, running) or stop (releasing).
AGENT_LISTED_STATUSES: tuple[str, ...] = (TaskStatus.BOUND, TaskStatus.RUNNING, TaskStatus.RELEASING)
# What a node agent may report of a pod.
AGENT_REPORTED_STATUSES: tuple[str, ...] = (TaskStatus.RUNNING, TaskStatus.SUCCEEDED, TaskStatus.FAILED)
# A pod in one of these is done (the engine's FINISHED_STATUSES, for queries on the rows).
FINISHED_POD_STATUSES: tuple[str, ...] = tuple(sorted(FINISHED_STATUSES))
