"""Whose each existing eviction was (job, queue, quota group by name), filled from its pod while the pod is still
there: the pod's quota group, or its namespace's when it names none. Evictions whose pod is already gone keep empty
names (nothing left says whose they were). Going back: the previous migration drops the columns."""

from django.db import migrations
from django.db.models import OuterRef, Subquery, Value
from django.db.models.functions import Coalesce


def backfill_owners(apps, schema_editor):
    Eviction = apps.get_model("scheduling", "Eviction")
    Pod = apps.get_model("scheduling", "Pod")
    pod = Pod.objects.filter(pk=OuterRef("pod_id"))
    Eviction.objects.filter(pod__isnull=False, job="").update(
        job=Coalesce(Subquery(pod.values("podgroup__name")[:1]), Value("")),
        queue=Coalesce(Subquery(pod.values("podgroup__queue__name")[:1]), Value("")),
        quota_group=Coalesce(
            Subquery(pod.values("quota_group__name")[:1]),
            Subquery(pod.values("namespace__quota_group__name")[:1]),
            Value(""),
        ),
    )


class Migration(migrations.Migration):

    dependencies = [
        ('scheduling', '0027_eviction_owners_removed_jobs'),
    ]

    operations = [
        migrations.RunPython(backfill_owners, migrations.RunPython.noop),
    ]
