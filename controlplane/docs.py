"""The OpenAPI schema and its Swagger UI / Redoc pages, for signed-in users only unless
``FAIRWAY_PUBLIC_API_DOCS=true`` (the schema maps every endpoint and parameter: no need to hand it to anyone who
asks). The schema answers an anonymous client as the API does (401 in the error envelope); the two HTML pages send
a browser to the login page and back.

The schema is built once per process and language and kept (drf-spectacular takes two to three seconds of CPU to
walk every view; the document is the same for every reader, ``SERVE_PUBLIC``), and built again after a setting
changes (Django's ``setting_changed``, which tests' ``override_settings`` send)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpResponse
from django.utils import translation
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny, BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response


def docs_are_public() -> bool:
    return bool(settings.FAIRWAY.get("PUBLIC_API_DOCS", False))


_SCHEMAS: dict[tuple[str | None, str | None], dict[str, Any]] = {}  # (API version, language) -> the document


@receiver(setting_changed)
def _forget_schemas(**_kwargs: Any) -> None:
    _SCHEMAS.clear()


class SchemaView(SpectacularAPIView):
    def get_permissions(self) -> list[BasePermission]:
        return [AllowAny()] if docs_are_public() else [IsAuthenticated()]

    def _get_schema_response(self, request: Request) -> Response:
        if self.urlconf is not None or self.patterns is not None or not self.serve_public:
            return super()._get_schema_response(request)  # a document that may differ: built each time
        version = self.api_version or request.version or self._get_version_parameter(request)
        key = (version, translation.get_language())
        schema = _SCHEMAS.get(key)
        if schema is None:
            generator = self.generator_class(urlconf=self.urlconf, api_version=version, patterns=self.patterns)
            schema = _SCHEMAS[key] = generator.get_schema(request=request, public=True)
        filename = self._get_filename(request, version)
        return Response(data=schema, headers={"Content-Disposition": f'inline; filename="{filename}"'})


# The docs pages load nothing from another host: their scripts and styles are the sidecar's, served here. ReDoc's
# sidebar still asks for its maker's logo from a CDN (an <img> it always draws, hidden when it fails to load): the
# policy keeps the browser from sending that request. Inline scripts and styles are the pages' own (the templates'
# settings and ReDoc's styled components); ReDoc's search runs in a worker made from a blob.
DOCS_CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "worker-src 'self' blob:",
        "frame-ancestors 'self'",
    )
)


class _LoginFirst:
    """An HTML docs page: anonymous browsers go to the login page (then come back) unless the docs are public."""

    def get_permissions(self) -> list[BasePermission]:
        return [AllowAny()]

    @extend_schema(exclude=True)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        if not docs_are_public() and not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        response: HttpResponse = super().get(request, *args, **kwargs)  # type: ignore[misc]
        response["Content-Security-Policy"] = DOCS_CONTENT_SECURITY_POLICY
        return response


class SwaggerView(_LoginFirst, SpectacularSwaggerView):
    pass


class RedocView(_LoginFirst, SpectacularRedocView):
    """ReDoc with no request leaving the server: the sidecar's script and the system's fonts (drf-spectacular's
    page links Google's web fonts)."""

    template_name = "frontend/api_redoc.html"


def write_warnings_are_optional(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """Schema post-processing: a tree object's ``warnings`` come only with the answer to a write
    (``quotas.serializers.AllProblemsAtOnce``), so the schema must not require them in every answer, as it does for
    any read-only field."""
    for schema in result.get("components", {}).get("schemas", {}).values():
        required = schema.get("required")
        if required and "warnings" in required and "warnings" in schema.get("properties", {}):
            required.remove("warnings")
    return result
