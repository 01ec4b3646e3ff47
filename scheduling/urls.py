"""API routes of the cluster (mounted under /api/v1/)."""

from rest_framework.routers import SimpleRouter

from scheduling.views import (
    ClusterViewSet,
    EvictionViewSet,
    NodeViewSet,
    PodGroupViewSet,
    PodViewSet,
    QuotaSampleViewSet,
    SchedulingSessionViewSet,
)

router = SimpleRouter()
router.register("clusters", ClusterViewSet)
router.register("nodes", NodeViewSet)
router.register("podgroups", PodGroupViewSet)
router.register("pods", PodViewSet)
router.register("sessions", SchedulingSessionViewSet)
router.register("evictions", EvictionViewSet)
router.register("samples", QuotaSampleViewSet)

urlpatterns = router.urls
