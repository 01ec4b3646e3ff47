"""The quota tree's tables and the built-in tree nodes (queues root and default; quota groups root, system and default),
squashed from ``0001_initial`` .. ``0007_tree_node_description`` (``replaces``: a database that applied them all
takes this one as applied)."""

import django.core.validators
import django.db.models.deletion
import quotas.fields
import simple_history.models
from django.conf import settings
from django.db import migrations, models

from quotas.migrations import _builtins


def create_builtins(apps, schema_editor):
    db = schema_editor.connection.alias
    _builtins.create(apps.get_model("quotas", "Queue"), apps.get_model("quotas", "QuotaGroup"), using=db)


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('quotas', '0001_initial'),
        ('quotas', '0002_builtin_nodes'),
        ('quotas', '0003_revision_counters'),
        ('quotas', '0004_borrowing_lending_limits'),
        ('quotas', '0005_queue_job_priority_range'),
        ('quotas', '0006_queue_min_runtime'),
        ('quotas', '0007_tree_node_description'),
    ]

    dependencies = [
        ('auth', '0012_alter_user_first_name_max_length'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Revision',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.CharField(max_length=64, unique=True)),
                ('value', models.PositiveBigIntegerField(default=0)),
            ],
        ),
        migrations.CreateModel(
            name='HistoricalQueue',
            fields=[
                ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                ('created', models.DateTimeField(blank=True, editable=False)),
                ('name', models.CharField(db_index=True, max_length=63)),
                ('weight', models.PositiveIntegerField(default=1, validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(65535)])),
                ('capability', quotas.fields.ResourceListField(blank=True, default=dict)),
                ('deserved', quotas.fields.ResourceListField(blank=True, default=dict)),
                ('guarantee', quotas.fields.ResourceListField(blank=True, default=dict)),
                ('borrowing_limit', quotas.fields.ResourceListField(blank=True, null=True)),
                ('lending_limit', quotas.fields.ResourceListField(blank=True, null=True)),
                ('reclaimable', models.BooleanField(default=True)),
                ('priority', models.PositiveIntegerField(default=0)),
                ('max_priority', models.IntegerField(blank=True, help_text='The highest priority a podgroup or pod of this queue (or of a queue below it) may have; empty: no maximum. Set by admins; raising or lowering it does not change existing jobs.', null=True, validators=[django.core.validators.MinValueValidator(-2147483648), django.core.validators.MaxValueValidator(2147483647)])),
                ('allow_non_preemptible', models.BooleanField(default=True, help_text="Whether pods of this queue (and of the queues below it) may be non-preemptible (they are still held to their quota group's min).")),
                ('min_runtime', models.PositiveIntegerField(blank=True, help_text="Seconds a pod of this queue (or of a queue below it) is kept from reclaim and preempt after it starts, unless its evictor's priority is strictly higher; empty: the nearest ancestor's, else the scheduler policy's minRuntime; 0: none.", null=True)),
                ('state', models.CharField(choices=[('Open', 'Open'), ('Closing', 'Closing'), ('Closed', 'Closed'), ('Unknown', 'Unknown')], default='Open', max_length=8)),
                ('closed_by_parent', models.BooleanField(default=False)),
                ('description', models.TextField(blank=True, default='', help_text='what the node is for, for people: free text of at most 500 characters, shown on its page; no rule reads it')),
                ('history_id', models.AutoField(primary_key=True, serialize=False)),
                ('history_date', models.DateTimeField(db_index=True)),
                ('history_change_reason', models.CharField(max_length=100, null=True)),
                ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name': 'historical queue',
                'verbose_name_plural': 'historical queues',
                'ordering': ('-history_date', '-history_id'),
                'get_latest_by': ('history_date', 'history_id'),
            },
            bases=(simple_history.models.HistoricalChanges, models.Model),
        ),
        migrations.CreateModel(
            name='HistoricalQuotaGroup',
            fields=[
                ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                ('created', models.DateTimeField(blank=True, editable=False)),
                ('name', models.CharField(db_index=True, max_length=253)),
                ('is_parent', models.BooleanField(default=False)),
                ('min', quotas.fields.ResourceListField(blank=True, default=dict)),
                ('max', quotas.fields.ResourceListField(blank=True, default=dict)),
                ('shared_weight', quotas.fields.ResourceListField(blank=True, null=True)),
                ('borrowing_limit', quotas.fields.ResourceListField(blank=True, null=True)),
                ('lending_limit', quotas.fields.ResourceListField(blank=True, null=True)),
                ('allow_lent', models.BooleanField(default=True)),
                ('tree_id', models.CharField(blank=True, default='', max_length=63)),
                ('min_scale_exempt', models.BooleanField(default=False)),
                ('description', models.TextField(blank=True, default='', help_text='what the node is for, for people: free text of at most 500 characters, shown on its page; no rule reads it')),
                ('history_id', models.AutoField(primary_key=True, serialize=False)),
                ('history_date', models.DateTimeField(db_index=True)),
                ('history_change_reason', models.CharField(max_length=100, null=True)),
                ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'verbose_name': 'historical quota group',
                'verbose_name_plural': 'historical quota groups',
                'ordering': ('-history_date', '-history_id'),
                'get_latest_by': ('history_date', 'history_id'),
            },
            bases=(simple_history.models.HistoricalChanges, models.Model),
        ),
        migrations.CreateModel(
            name='Queue',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('version', models.PositiveBigIntegerField(default=1, editable=False)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('updated', models.DateTimeField(auto_now=True)),
                ('name', models.CharField(max_length=63, unique=True)),
                ('weight', models.PositiveIntegerField(default=1, validators=[django.core.validators.MinValueValidator(1), django.core.validators.MaxValueValidator(65535)])),
                ('capability', quotas.fields.ResourceListField(blank=True, default=dict)),
                ('deserved', quotas.fields.ResourceListField(blank=True, default=dict)),
                ('guarantee', quotas.fields.ResourceListField(blank=True, default=dict)),
                ('borrowing_limit', quotas.fields.ResourceListField(blank=True, null=True)),
                ('lending_limit', quotas.fields.ResourceListField(blank=True, null=True)),
                ('reclaimable', models.BooleanField(default=True)),
                ('priority', models.PositiveIntegerField(default=0)),
                ('max_priority', models.IntegerField(blank=True, help_text='The highest priority a podgroup or pod of this queue (or of a queue below it) may have; empty: no maximum. Set by admins; raising or lowering it does not change existing jobs.', null=True, validators=[django.core.validators.MinValueValidator(-2147483648), django.core.validators.MaxValueValidator(2147483647)])),
                ('allow_non_preemptible', models.BooleanField(default=True, help_text="Whether pods of this queue (and of the queues below it) may be non-preemptible (they are still held to their quota group's min).")),
                ('min_runtime', models.PositiveIntegerField(blank=True, help_text="Seconds a pod of this queue (or of a queue below it) is kept from reclaim and preempt after it starts, unless its evictor's priority is strictly higher; empty: the nearest ancestor's, else the scheduler policy's minRuntime; 0: none.", null=True)),
                ('state', models.CharField(choices=[('Open', 'Open'), ('Closing', 'Closing'), ('Closed', 'Closed'), ('Unknown', 'Unknown')], default='Open', max_length=8)),
                ('closed_by_parent', models.BooleanField(default=False)),
                ('description', models.TextField(blank=True, default='', help_text='what the node is for, for people: free text of at most 500 characters, shown on its page; no rule reads it')),
                ('parent', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='children', to='quotas.queue')),
                ('teams', models.ManyToManyField(blank=True, related_name='queues', to='auth.group')),
            ],
            options={
                'ordering': ['name'],
            },
        ),
        migrations.CreateModel(
            name='HistoricalQueue_teams',
            fields=[
                ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                ('m2m_history_id', models.AutoField(primary_key=True, serialize=False)),
                ('group', models.ForeignKey(blank=True, db_constraint=False, db_tablespace='', null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='auth.group')),
                ('history', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING, to='quotas.historicalqueue')),
                ('queue', models.ForeignKey(blank=True, db_constraint=False, db_tablespace='', null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='quotas.queue')),
            ],
            options={
                'verbose_name': 'HistoricalQueue_teams',
            },
            bases=(simple_history.models.HistoricalChanges, models.Model),
        ),
        migrations.AddField(
            model_name='historicalqueue',
            name='parent',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='quotas.queue'),
        ),
        migrations.CreateModel(
            name='QuotaGroup',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('version', models.PositiveBigIntegerField(default=1, editable=False)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('updated', models.DateTimeField(auto_now=True)),
                ('name', models.CharField(max_length=253, unique=True)),
                ('is_parent', models.BooleanField(default=False)),
                ('min', quotas.fields.ResourceListField(blank=True, default=dict)),
                ('max', quotas.fields.ResourceListField(blank=True, default=dict)),
                ('shared_weight', quotas.fields.ResourceListField(blank=True, null=True)),
                ('borrowing_limit', quotas.fields.ResourceListField(blank=True, null=True)),
                ('lending_limit', quotas.fields.ResourceListField(blank=True, null=True)),
                ('allow_lent', models.BooleanField(default=True)),
                ('tree_id', models.CharField(blank=True, default='', max_length=63)),
                ('min_scale_exempt', models.BooleanField(default=False)),
                ('description', models.TextField(blank=True, default='', help_text='what the node is for, for people: free text of at most 500 characters, shown on its page; no rule reads it')),
                ('parent', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='children', to='quotas.quotagroup')),
                ('teams', models.ManyToManyField(blank=True, related_name='quota_groups', to='auth.group')),
            ],
            options={
                'ordering': ['name'],
            },
        ),
        migrations.CreateModel(
            name='Namespace',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('version', models.PositiveBigIntegerField(default=1, editable=False)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('updated', models.DateTimeField(auto_now=True)),
                ('name', models.CharField(max_length=63, unique=True)),
                ('weight', models.PositiveIntegerField(default=1, validators=[django.core.validators.MinValueValidator(1)])),
                ('hard', quotas.fields.ResourceListField(blank=True, null=True)),
                ('default_queue', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='default_for_namespaces', to='quotas.queue')),
                ('quota_group', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='namespaces', to='quotas.quotagroup')),
            ],
            options={
                'ordering': ['name'],
            },
        ),
        migrations.CreateModel(
            name='HistoricalQuotaGroup_teams',
            fields=[
                ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                ('m2m_history_id', models.AutoField(primary_key=True, serialize=False)),
                ('group', models.ForeignKey(blank=True, db_constraint=False, db_tablespace='', null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='auth.group')),
                ('history', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING, to='quotas.historicalquotagroup')),
                ('quotagroup', models.ForeignKey(blank=True, db_constraint=False, db_tablespace='', null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='quotas.quotagroup')),
            ],
            options={
                'verbose_name': 'HistoricalQuotaGroup_teams',
            },
            bases=(simple_history.models.HistoricalChanges, models.Model),
        ),
        migrations.AddField(
            model_name='historicalquotagroup',
            name='parent',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='quotas.quotagroup'),
        ),
        migrations.CreateModel(
            name='HistoricalNamespace',
            fields=[
                ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                ('created', models.DateTimeField(blank=True, editable=False)),
                ('name', models.CharField(db_index=True, max_length=63)),
                ('weight', models.PositiveIntegerField(default=1, validators=[django.core.validators.MinValueValidator(1)])),
                ('hard', quotas.fields.ResourceListField(blank=True, null=True)),
                ('history_id', models.AutoField(primary_key=True, serialize=False)),
                ('history_date', models.DateTimeField(db_index=True)),
                ('history_change_reason', models.CharField(max_length=100, null=True)),
                ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('default_queue', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='quotas.queue')),
                ('quota_group', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='quotas.quotagroup')),
            ],
            options={
                'verbose_name': 'historical namespace',
                'verbose_name_plural': 'historical namespaces',
                'ordering': ('-history_date', '-history_id'),
                'get_latest_by': ('history_date', 'history_id'),
            },
            bases=(simple_history.models.HistoricalChanges, models.Model),
        ),
        migrations.AddConstraint(
            model_name='queue',
            constraint=models.CheckConstraint(condition=models.Q(('weight__gte', 1), ('weight__lte', 65535)), name='queue_weight_range'),
        ),
        migrations.AddConstraint(
            model_name='queue',
            constraint=models.CheckConstraint(condition=models.Q(('parent__isnull', False), ('name', 'root'), _connector='OR'), name='queue_parent_unless_root'),
        ),
        migrations.AddConstraint(
            model_name='quotagroup',
            constraint=models.CheckConstraint(condition=models.Q(('parent__isnull', False), ('name', 'root'), _connector='OR'), name='quota_group_parent_unless_root'),
        ),
        migrations.AddConstraint(
            model_name='namespace',
            constraint=models.CheckConstraint(condition=models.Q(('weight__gte', 1)), name='namespace_weight_positive'),
        ),
        # going back drops the tables (deleting the rows first would leave PostgreSQL's deferred foreign key checks
        # pending on a table to alter)
        migrations.RunPython(create_builtins, migrations.RunPython.noop),
    ]
