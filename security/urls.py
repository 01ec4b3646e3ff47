"""API routes of the security app (mounted under /api/v1/)."""

from rest_framework.routers import SimpleRouter

from security.api import SecurityEventViewSet

router = SimpleRouter()
router.register("security-events", SecurityEventViewSet)

urlpatterns = router.urls
