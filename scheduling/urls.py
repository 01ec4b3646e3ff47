"""API routes of the cluster (mounted under /api/v1/)."""

from rest_framework.routers import SimpleRouter

from scheduling.views import ClusterViewSet, NodeViewSet, PodGroupViewSet, PodViewSet

router = SimpleRouter()
router.register("clusters", ClusterViewSet)
router.register("nodes", NodeViewSet)
router.register("podgroups", PodGroupViewSet)
router.register("pods", PodViewSet)

urlpatterns = router.urls
