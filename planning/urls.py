"""API routes of the computed values (mounted under /api/v1/ before the trees' routes, whose prefixes the tree and
explain actions share)."""

from django.urls import path
from rest_framework.routers import APIRootView, SimpleRouter

from planning.audit import AuditView
from planning.department import DepartmentView
from planning.export import ExportView
from planning.replay_api import ReplayViewSet
from planning.session_replay import RecordedSessionsView, SessionReplayAtView, SessionReplayView
from planning.trace import TraceView
from planning.values_api import SimulateView, WhatIfView
from planning.views import PodGroupWhyViewSet, QueueValuesViewSet, QuotaGroupValuesViewSet
from quotas.urls import router as trees
from scheduling.urls import router as cluster

router = SimpleRouter()
router.register("queues", QueueValuesViewSet)
router.register("quota-groups", QuotaGroupValuesViewSet)
router.register("replays", ReplayViewSet, basename="replay")


def _collections() -> dict[str, str]:
    """Every collection of the API by its path, as the root lists them (the trees', then the cluster's)."""
    return {prefix: f"{basename}-list" for r in (trees, cluster) for prefix, _viewset, basename in r.registry}


class ApiRootView(APIRootView):
    """The collections of the API, the what-if, simulate, export and audit endpoints."""


ROOT = {
    **_collections(),
    "whatif": "whatif",
    "simulate": "simulate",
    "export": "export",
    "trace": "trace",
    "replays": "replay-list",
    "audit": "audit",
    "security-events": "securityevent-list",
    "change-requests": "changerequest-list",
}

urlpatterns = [
    path("", ApiRootView.as_view(api_root_dict=ROOT), name="api-root"),
    path("whatif/", WhatIfView.as_view(), name="whatif"),
    path("simulate/", SimulateView.as_view(), name="simulate"),
    path("export/", ExportView.as_view(), name="export"),
    path("trace/", TraceView.as_view(), name="trace"),
    path("audit/", AuditView.as_view(), name="audit"),
    path("teams/<str:name>/department/", DepartmentView.as_view(), name="team-department"),
    # one recorded session replayed (admins; before the cluster's routes, whose sessions/{id}/ they share)
    path("sessions/recorded/", RecordedSessionsView.as_view(), name="recorded-sessions"),
    path("sessions/replay/", SessionReplayAtView.as_view(), name="session-replay-at"),
    path("sessions/<int:id>/replay/", SessionReplayView.as_view(), name="session-replay"),
    path("podgroups/<str:pk>/why/", PodGroupWhyViewSet.as_view({"get": "why"}), name="podgroup-why"),
    *router.urls,
]
