from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ChangeRequestsConfig(AppConfig):
    name = "changerequests"
    verbose_name = "Change requests"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from changerequests.tasks import ensure_schedule

        post_migrate.connect(ensure_schedule, sender=self, dispatch_uid="changerequests.loan-schedule")
