"""A job's history row says who submitted it and the GPU-seconds its pods held (the fairness audit's figures per
submitter). Rows written before get the GPU-seconds of their recorded work (each pod's run times its GPUs: evicted runs
were not recorded) and no user (their namespace counts as their user)."""

from django.db import migrations, models

from engine.resources import whole_gpus


def recorded_work(apps, schema_editor):  # noqa: ANN001, ARG001 - a migration's signature
    JobRecord = apps.get_model("scheduling", "JobRecord")
    changed = []
    for row in JobRecord.objects.exclude(runtime=None).only("id", "roles", "runtime", "pod_runtimes").iterator(2000):
        runs = iter(row.pod_runtimes or ())
        total = 0.0
        for role in row.roles or ():
            gpus = whole_gpus({k: int(v) for k, v in (role[2] or {}).items()})
            for _ in range(int(role[1])):
                run = next(runs, None) if row.pod_runtimes else row.runtime
                total += gpus * float(run or 0.0)
        if total:
            row.gpu_seconds = round(total, 1)
            changed.append(row)
        if len(changed) >= 2000:
            JobRecord.objects.bulk_update(changed, ["gpu_seconds"])
            changed = []
    JobRecord.objects.bulk_update(changed, ["gpu_seconds"])


class Migration(migrations.Migration):
    dependencies = [
        ("scheduling", "0041_podgroup_kueue_max_exec_seconds"),
    ]

    operations = [
        migrations.AddField(
            model_name="jobrecord",
            name="user",
            field=models.CharField(
                blank=True,
                default="",
                help_text="Who submitted it (empty: its namespace counts as its user).",
                max_length=253,
            ),
        ),
        migrations.AddField(
            model_name="jobrecord",
            name="gpu_seconds",
            field=models.FloatField(
                default=0.0,
                help_text="The GPUs its pods held while they ran, in whole GPUs x seconds (evicted runs included).",
            ),
        ),
        migrations.RunPython(recorded_work, migrations.RunPython.noop),
    ]
