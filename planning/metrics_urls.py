"""``/metrics`` (mounted at the site's root by ``controlplane.urls``; see ``planning.metrics``)."""

from django.urls import path

from planning.metrics import metrics

urlpatterns = [path("metrics", metrics, name="metrics")]
