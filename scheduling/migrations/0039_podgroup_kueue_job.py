"""A Kueue batch/v1 Job's podgroup: what the adapter read of the Job (``PodGroup.kueue_job``) and the count a session
admitted it with in part (``PodGroup.kueue_admitted_count``), and the change feed's triggers made again so that a
change of either is logged (``scheduling.feed.triggers.COLUMNS``), as in 0038."""

from django.db import migrations, models

from scheduling.feed import triggers

# the change feed's logged columns before this migration and after it
BEFORE = triggers.columns_as_of("0038_podgroup_kueue_pod_group_count")
AFTER = triggers.columns_as_of("0039_podgroup_kueue_job")


class Migration(migrations.Migration):

    dependencies = [
        ('scheduling', '0038_podgroup_kueue_pod_group_count'),
    ]

    operations = [
        # SQLite, going back: the triggers of before, once the columns are gone
        triggers.RunSQLOn("sqlite", triggers.SQLITE_DROP, triggers.SQLITE_DROP + triggers.sqlite_create(BEFORE)),
        migrations.AddField(
            model_name='podgroup',
            name='kueue_admitted_count',
            field=models.PositiveIntegerField(blank=True, help_text="source=kubernetes: the pods a session admitted a Kueue Job with when that is fewer than its count (partial admission, kueue.x-k8s.io/job-min-parallelism): the adapter lowers the Job's spec.parallelism to it, and gives the Job its own back once it waits again. Null: admitted whole, or not admitted.", null=True),
        ),
        migrations.AddField(
            model_name='podgroup',
            name='kueue_job',
            field=models.JSONField(blank=True, help_text='source=kubernetes: a Kueue batch/v1 Job\'s podgroup: {"minCount": its kueue.x-k8s.io/job-min-parallelism or null, "suspended": whether spec.suspend is true}. Its pod count is kueue_pod_group_count. Null: any other podgroup.', null=True),
        ),
        triggers.RunSQLOn(
            "postgresql",
            triggers.POSTGRESQL_DROP + triggers.postgresql_create(AFTER),
            triggers.POSTGRESQL_DROP + triggers.postgresql_create(BEFORE),
        ),
        triggers.RunSQLOn("sqlite", triggers.sqlite_create(AFTER), triggers.SQLITE_DROP),
    ]
