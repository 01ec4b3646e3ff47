from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from quotas.views import NamespaceViewSet, QueueViewSet, QuotaGroupViewSet
from scheduling.views import ClusterViewSet, NodeViewSet, PodGroupViewSet, PodViewSet

router = DefaultRouter()
router.register("queues", QueueViewSet)
router.register("quota-groups", QuotaGroupViewSet)
router.register("namespaces", NamespaceViewSet)
router.register("clusters", ClusterViewSet)
router.register("nodes", NodeViewSet)
router.register("podgroups", PodGroupViewSet)
router.register("pods", PodViewSet)

urlpatterns = [
    # Schema and docs come before the versioned API, or "docs" would be taken for a version.
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="redoc"),
    re_path(r"^api/(?P<version>v1)/", include(router.urls)),
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(template_name="frontend/login.html"), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("frontend.urls")),
]

handler404 = "controlplane.errors.not_found"
handler500 = "controlplane.errors.server_error"
