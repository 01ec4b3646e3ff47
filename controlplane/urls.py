from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path

from controlplane.docs import RedocView, SchemaView, SwaggerView

urlpatterns = [
    # Schema and docs come before the versioned API, or "docs" would be taken for a version.
    # Schema and docs need a login unless FAIRWAY_PUBLIC_API_DOCS=true (controlplane/docs.py).
    path("api/schema/", SchemaView.as_view(), name="schema"),
    path("api/docs/", SwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/redoc/", RedocView.as_view(url_name="schema"), name="redoc"),
    # planning's tree and explain actions share the trees' prefixes (queues/tree/), so they come first.
    re_path(r"^api/(?P<version>v1)/", include("planning.urls")),
    re_path(r"^api/(?P<version>v1)/", include("quotas.urls")),
    re_path(r"^api/(?P<version>v1)/", include("scheduling.urls")),
    re_path(r"^api/(?P<version>v1)/", include("security.urls")),
    re_path(r"^api/(?P<version>v1)/", include("changerequests.urls")),
    path("", include("planning.metrics_urls")),  # /metrics for Prometheus
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(template_name="frontend/login.html"), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("oidc/", include("identity.urls")),  # sign-in with OpenID Connect: 404 unless configured
    path("", include("frontend.urls")),
]

handler404 = "core.errors.not_found"
handler500 = "core.errors.server_error"
