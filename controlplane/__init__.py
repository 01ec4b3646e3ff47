"""The Django project, and the ``fairway`` command-line tool (``controlplane.cli``).

The Celery application (``controlplane.celery``) is created by the settings, so that every process that starts
Django has it before a task is sent or ``shared_task`` is bound; ``celery -A controlplane`` finds it in
``controlplane.celery``. It is not imported here: the command-line tool lives in this package and would pay for
importing Celery (about 0.13 s) on every run without using it.
"""

from typing import Any

__all__ = ["celery_app"]


def __getattr__(name: str) -> Any:
    if name == "celery_app":
        from controlplane.celery import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
