from django.apps import AppConfig


class SecurityConfig(AppConfig):
    """API tokens (hashed, expiring, optionally read-only), the secrets kept encrypted at rest, the login and token
    throttles and the security log (``fairway.security``)."""

    name = "security"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from security import events  # noqa: F401  (connects the signal receivers that write the security log)
