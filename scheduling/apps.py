from django.apps import AppConfig


class SchedulingConfig(AppConfig):
    name = "scheduling"
    verbose_name = "Cluster and scheduling"
    default_auto_field = "django.db.models.BigAutoField"
