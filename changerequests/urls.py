"""API routes of the change requests (mounted under /api/v1/)."""

from rest_framework.routers import SimpleRouter

from changerequests.api import ChangeRequestViewSet

router = SimpleRouter()
router.register("change-requests", ChangeRequestViewSet)

urlpatterns = router.urls
