"""API routes of the trees (mounted under /api/v1/; their computed values are ``planning.urls``)."""

from rest_framework.routers import SimpleRouter

from quotas.views import LocalQueueViewSet, NamespaceViewSet, QueueViewSet, QuotaGroupViewSet, ResourceFlavorViewSet

router = SimpleRouter()  # the API root (planning.urls) lists these with the cluster's collections
router.register("queues", QueueViewSet)
router.register("quota-groups", QuotaGroupViewSet)
router.register("namespaces", NamespaceViewSet)
router.register("resource-flavors", ResourceFlavorViewSet)
router.register("local-queues", LocalQueueViewSet)

urlpatterns = router.urls
