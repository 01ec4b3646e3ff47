"""A Kueue pod group's pod count (``PodGroup.kueue_pod_group_count``), and the change feed's triggers made again so
that a change of it is logged (``scheduling.feed.triggers.COLUMNS``): the live sessions do not admit such a group while
it waits for its pods. On SQLite the triggers are dropped before the column is added (should Django rebuild the
table) and made again after it; going back, the triggers of before are made again after the column is removed."""

from django.db import migrations, models

from scheduling.feed import triggers

# the change feed's logged columns before this migration and after it
BEFORE = triggers.columns_as_of("0037_pod_node_affinity")
AFTER = triggers.columns_as_of("0038_podgroup_kueue_pod_group_count")


class Migration(migrations.Migration):

    dependencies = [
        ('scheduling', '0037_pod_node_affinity'),
    ]

    operations = [
        # SQLite, going back: the triggers of before, once the column is gone
        triggers.RunSQLOn("sqlite", triggers.SQLITE_DROP, triggers.SQLITE_DROP + triggers.sqlite_create(BEFORE)),
        migrations.AddField(
            model_name='podgroup',
            name='kueue_pod_group_count',
            field=models.PositiveIntegerField(blank=True, help_text="source=kubernetes: a Kueue pod group's pod count (its pods' annotation kueue.x-k8s.io/pod-group-total-count), which Kueue admits only once all its pods exist: while fewer of its pods can run and none is on a node, the sessions do not admit it. Null: any other podgroup (a Volcano PodGroup, a Kueue pod group with fast admission).", null=True),
        ),
        triggers.RunSQLOn(
            "postgresql",
            triggers.POSTGRESQL_DROP + triggers.postgresql_create(AFTER),
            triggers.POSTGRESQL_DROP + triggers.postgresql_create(BEFORE),
        ),
        triggers.RunSQLOn("sqlite", triggers.sqlite_create(AFTER), triggers.SQLITE_DROP),
    ]
