from django.apps import AppConfig


class PlanningConfig(AppConfig):
    name = "planning"
    verbose_name = "Computed values (read-only)"
    default_auto_field = "django.db.models.BigAutoField"
