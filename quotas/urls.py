"""API routes of the trees (mounted under /api/v1/; their computed values are ``planning.urls``)."""

from rest_framework.routers import DefaultRouter

from quotas.views import NamespaceViewSet, QueueViewSet, QuotaGroupViewSet

router = DefaultRouter()
router.register("queues", QueueViewSet)
router.register("quota-groups", QuotaGroupViewSet)
router.register("namespaces", NamespaceViewSet)

urlpatterns = router.urls
