"""The dashboard's pages (server-rendered; each read page also answers ``?live=1`` with its live JSON)."""

from django.urls import path

from frontend.views import (
    audit,
    delete,
    editor,
    history,
    job,
    jobs,
    node,
    node_form,
    nodes,
    overview,
    team,
    tokens,
    tree,
    whatif,
)

app_name = "frontend"
urlpatterns = [
    path("", overview.home, name="home"),
    path("overview/", overview.overview, name="overview"),
    path("trees/<str:kind_path>/", tree.tree_page, name="tree"),
    path("queues/<str:name>/", node.queue_page, name="queue"),
    path("quotas/<str:name>/", node.quota_page, name="quota"),
    path("nodes/", nodes.nodes, name="nodes"),
    path("nodes/<str:name>/", nodes.node_detail, name="cluster-node"),
    path("team/", team.team, name="team"),
    path("team/<str:group>/", team.team_detail, name="team-detail"),
    path("edit/", editor.index, name="edit"),
    path("edit/new/queue/", node_form.new_queue, name="new-queue"),
    path("edit/queues/<str:name>/", node_form.edit_queue, name="edit-queue"),
    path("edit/queues/<str:name>/<str:action>/", editor.queue_action, name="queue-action"),
    path("edit/new/quota/", node_form.new_quota, name="new-quota"),
    path("edit/quotas/<str:name>/", node_form.edit_quota, name="edit-quota"),
    path("edit/delete/<str:kind_path>/<str:name>/", delete.delete, name="delete"),
    path("edit/namespaces/<str:name>/weight/", editor.namespace_weight, name="namespace-weight"),
    path("whatif/", whatif.whatif, name="whatif"),
    path("whatif/apply/", whatif.apply, name="whatif-apply"),
    path("whatif/discard/", whatif.discard, name="whatif-discard"),
    path("whatif/remove/<int:index>/", whatif.remove, name="whatif-remove"),
    path("jobs/", jobs.jobs, name="jobs"),
    path("jobs/filter-names/", jobs.job_filter_names, name="job-filter-names"),
    path("jobs/<str:namespace>/<str:name>/", job.job, name="job"),
    path("audit/", audit.audit_page, name="audit"),
    path("audit/stage/", audit.stage_suggestion, name="audit-stage"),
    path("history/", history.recent, name="history-recent"),
    path("tokens/", tokens.tokens, name="tokens"),
    path("tokens/<int:pk>/revoke/", tokens.revoke, name="token-revoke"),
    path("history/<str:kind_path>/<str:name>/", history.node_history, name="history"),
]
