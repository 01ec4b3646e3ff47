"""The tree models' choices, derived from the engine's enums so that each value is written once."""

from django.db import models

from engine.objects import QueueState as EngineQueueState

QueueState = models.TextChoices("QueueState", [(s.name, s.value) for s in EngineQueueState])
