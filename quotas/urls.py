"""API routes of the trees (mounted under /api/v1/)."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from quotas.values_api import SimulateView, WhatIfView
from quotas.views import NamespaceViewSet, QueueViewSet, QuotaGroupViewSet

router = DefaultRouter()
router.register("queues", QueueViewSet)
router.register("quota-groups", QuotaGroupViewSet)
router.register("namespaces", NamespaceViewSet)

urlpatterns = [
    path("whatif/", WhatIfView.as_view(), name="whatif"),
    path("simulate/", SimulateView.as_view(), name="simulate"),
    *router.urls,
]
