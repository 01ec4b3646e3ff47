from django.apps import AppConfig


class IdentityConfig(AppConfig):
    name = "identity"
    verbose_name = "Sign-in (OpenID Connect)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Fail fast: a malformed FAIRWAY_OIDC_* setting stops every process at start, not the first sign-in.
        from identity import provider

        provider.check_settings()
