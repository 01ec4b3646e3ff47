"""The loans' clock: a periodic task that returns every loan past its end (``services.return_due``), and its
schedule (one django-celery-beat entry, created after ``migrate`` and editable in the admin)."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings

TASK = "changerequests.tasks.return_loans"
SCHEDULE_NAME = "Fairway: return loans at their end"


@shared_task(name=TASK, acks_late=True, soft_time_limit=120, time_limit=150)
def return_loans() -> str:
    from changerequests import services

    returned = services.return_due()
    return f"returned {len(returned)}"


def ensure_schedule(**kwargs: Any) -> None:
    """Create the periodic entry if it is missing (``post_migrate``); an admin's edits of it are kept."""
    from django_celery_beat.models import IntervalSchedule, PeriodicTask

    if PeriodicTask.objects.filter(task=TASK).exists():
        return
    every = int(settings.FAIRWAY["LOAN_CHECK_SECONDS"])
    interval, _ = IntervalSchedule.objects.get_or_create(every=every, period=IntervalSchedule.SECONDS)
    PeriodicTask.objects.create(
        name=SCHEDULE_NAME,
        task=TASK,
        interval=interval,
        expire_seconds=max(1, every - 1),
        description=f"Fairway: every {every} s, the loans past their end go back (FAIRWAY_LOAN_CHECK_SECONDS)",
    )
