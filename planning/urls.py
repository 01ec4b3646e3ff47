"""API routes of the computed values (mounted under /api/v1/ before the trees' routes, whose prefixes the tree and
explain actions share)."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from planning.values_api import SimulateView, WhatIfView
from planning.views import QueueValuesViewSet, QuotaGroupValuesViewSet

router = DefaultRouter()
router.include_root_view = False  # the API root is the trees' router's (quotas.urls)
router.register("queues", QueueValuesViewSet)
router.register("quota-groups", QuotaGroupValuesViewSet)

urlpatterns = [
    path("whatif/", WhatIfView.as_view(), name="whatif"),
    path("simulate/", SimulateView.as_view(), name="simulate"),
    *router.urls,
]
