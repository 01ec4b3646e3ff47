"""The Celery application: configured from Django settings (``CELERY_*``), tasks discovered per app."""

import os
import sys

from celery import Celery
from kombu.transport import TRANSPORT_ALIASES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")

# The embedded broker: kombu's filesystem transport with atomic message files (see controlplane/fs_transport.py).
TRANSPORT_ALIASES["filesystem"] = "controlplane.fs_transport:Transport"

from controlplane import worker_metrics  # noqa: E402 - its signal handlers; before Django imports prometheus-client

worker_metrics.prepare(sys.argv)

app = Celery("controlplane")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
