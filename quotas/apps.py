from django.apps import AppConfig


class QuotasConfig(AppConfig):
    name = "quotas"
    verbose_name = "Quota trees"
    default_auto_field = "django.db.models.BigAutoField"
