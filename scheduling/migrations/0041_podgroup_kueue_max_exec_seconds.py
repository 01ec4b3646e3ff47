"""Kueue's maximum execution time kept in a column of its own (``PodGroup.kueue_max_exec_seconds``) for every Kueue
workload, a pod group's and a plain pod's too: a Job's moves there from its ``kueue_job`` (``maxExecSeconds``)."""

from django.db import migrations, models


def _to_column(apps, schema_editor):
    rows = apps.get_model("scheduling", "PodGroup").objects.using(schema_editor.connection.alias)
    for pg in rows.filter(kueue_job__has_key="maxExecSeconds").only("pk", "kueue_job"):
        job = dict(pg.kueue_job)
        seconds = job.pop("maxExecSeconds")
        rows.filter(pk=pg.pk).update(
            kueue_job=job, kueue_max_exec_seconds=seconds if isinstance(seconds, int) and seconds > 0 else None
        )


def _to_kueue_job(apps, schema_editor):
    rows = apps.get_model("scheduling", "PodGroup").objects.using(schema_editor.connection.alias)
    limited = rows.filter(kueue_max_exec_seconds__isnull=False, kueue_job__isnull=False)
    for pg in limited.only("pk", "kueue_job", "kueue_max_exec_seconds"):
        rows.filter(pk=pg.pk).update(kueue_job={**pg.kueue_job, "maxExecSeconds": pg.kueue_max_exec_seconds})


class Migration(migrations.Migration):

    dependencies = [
        ('scheduling', '0040_podgroup_pod_set_flavors'),
    ]

    operations = [
        migrations.AddField(
            model_name='podgroup',
            name='kueue_max_exec_seconds',
            field=models.PositiveIntegerField(blank=True, help_text="source=kubernetes: a Kueue workload's kueue.x-k8s.io/max-exec-time-seconds (a Job, JobSet, Kubeflow job or MPIJob, a pod group's pods, a plain pod): admitted that long in all, it is suspended (MaximumExecutionTimeExceeded) until a person resumes it. Null: no maximum.", null=True),
        ),
        migrations.RunPython(_to_column, _to_kueue_job),
    ]
