from django.apps import AppConfig


class ChangeRequestsConfig(AppConfig):
    name = "changerequests"
    verbose_name = "Change requests"
    default_auto_field = "django.db.models.BigAutoField"
