"""The dashboard app: server-rendered pages over the engine's values (see frontend/views/)."""

from django.apps import AppConfig


class FrontendConfig(AppConfig):
    name = "frontend"
    verbose_name = "Dashboard"
