"""Server-rendered pages."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from quotas.access import is_admin, visible_group_ids, visible_queue_ids
from quotas.models import QuotaGroup, Queue
from scheduling.models import Node, PodGroup


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Landing page: what the user may see of the trees and the cluster, and where to go next."""
    queue_ids = visible_queue_ids(request.user)
    group_ids = visible_group_ids(request.user)
    queues = Queue.objects.all() if queue_ids is None else Queue.objects.filter(pk__in=queue_ids)
    groups = QuotaGroup.objects.all() if group_ids is None else QuotaGroup.objects.filter(pk__in=group_ids)
    podgroups = PodGroup.objects.filter(queue__in=queues)
    context = {
        "is_admin": is_admin(request.user),
        "queues": queues.select_related("parent").order_by("name"),
        "groups": groups.select_related("parent").order_by("name"),
        "nodes": Node.objects.count(),
        "ready_nodes": Node.objects.filter(ready=True).count(),
        "podgroups": podgroups.count(),
    }
    return render(request, "frontend/home.html", context)
