"""The Celery application: configured from Django settings (``CELERY_*``), tasks discovered per app."""

import os

from celery import Celery
from kombu.transport import TRANSPORT_ALIASES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")

# The embedded broker: kombu's filesystem transport with atomic message files (see controlplane/fs_transport.py).
TRANSPORT_ALIASES["filesystem"] = "controlplane.fs_transport:Transport"

app = Celery("controlplane")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
