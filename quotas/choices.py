from django.db import models


class QueueState(models.TextChoices):
    OPEN = "Open"
    CLOSING = "Closing"
    CLOSED = "Closed"
    UNKNOWN = "Unknown"
