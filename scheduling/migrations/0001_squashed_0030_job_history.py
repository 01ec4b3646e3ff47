"""The scheduling tables, squashed from ``0001_initial`` .. ``0030_job_history`` (``replaces``: a database that applied
them all takes this one as applied), with what every database needs: the default cluster and its change feed row,
the ``node-agents`` group, the session bindings compressed with lz4 (PostgreSQL 14+ built with it) and the change
feed's triggers (``scheduling.feed.triggers``, created after the tables in their final shape).

Left out, as they only transformed rows a new database does not have (a database that had them applied them):
``0022_encrypt_kubeconfigs`` (plaintext kubeconfigs encrypted into ``kubeconfig_encrypted``) and
``0028_backfill_eviction_owners`` (the job, queue and quota group of existing evictions filled in from their pods);
likewise the trigger reinstalls of ``0015``, ``0017`` and ``0026`` after SQLite table rebuilds."""

import django.core.validators
import django.db.models.deletion
import quotas.fields
import scheduling.models
import uuid
from django.conf import settings
from django.db import migrations, models, transaction
from django.db.utils import DatabaseError

from scheduling.feed import triggers

NODE_AGENTS_GROUP = "node-agents"  # scheduling.agent_access
LZ4_TABLE = "scheduling_schedulingsession"


def create_default_cluster(apps, schema_editor):
    """The default cluster and its ``ClusterFeed`` row (later clusters get theirs when saved), so that a mirror that
    only reads, a page's, never has to create it: on SQLite a read-only request does not take the write lock."""
    db = schema_editor.connection.alias
    cluster, _ = apps.get_model("scheduling", "Cluster").objects.using(db).get_or_create(
        name="default", defaults={"description": "The cluster this control plane manages"}
    )
    apps.get_model("scheduling", "ClusterFeed").objects.using(db).get_or_create(cluster_id=cluster.pk)


def create_node_agents_group(apps, schema_editor):
    """Its members (and admins) may call the node-agent API (register nodes, heartbeat, list a node's pods, report
    pod status, confirm evictions)."""
    apps.get_model("auth", "Group").objects.using(schema_editor.connection.alias).get_or_create(name=NODE_AGENTS_GROUP)


def _compress_bindings(schema_editor, method: str) -> None:
    """A session's bindings (a few MB of JSON after a big session) with lz4 rather than PostgreSQL's default pglz:
    a third of the time to write them. Only where the server has lz4; elsewhere nothing changes."""
    connection = schema_editor.connection
    if connection.vendor != "postgresql" or connection.pg_version < 140000:
        return
    try:
        with transaction.atomic(using=connection.alias):
            schema_editor.execute(f"ALTER TABLE {LZ4_TABLE} ALTER COLUMN bindings SET COMPRESSION {method}")
    except DatabaseError:  # a server built without lz4
        pass


def compress_bindings_lz4(apps, schema_editor):
    _compress_bindings(schema_editor, "lz4")


def compress_bindings_pglz(apps, schema_editor):
    _compress_bindings(schema_editor, "pglz")


class Migration(migrations.Migration):

    initial = True

    replaces = [
        ('scheduling', '0001_initial'),
        ('scheduling', '0002_default_cluster'),
        ('scheduling', '0003_scheduling_records'),
        ('scheduling', '0004_node_agents_group'),
        ('scheduling', '0005_node_pools_and_agent_bindings'),
        ('scheduling', '0006_podgroup_requeue_state'),
        ('scheduling', '0007_dead_nodes_and_outage_grace'),
        ('scheduling', '0008_pod_redundant_indexes'),
        ('scheduling', '0009_change_feed'),
        ('scheduling', '0010_change_feed_triggers'),
        ('scheduling', '0011_change_feed_sqlite'),
        ('scheduling', '0012_cluster_counters'),
        ('scheduling', '0013_usage_history'),
        ('scheduling', '0014_kubernetes_adapter'),
        ('scheduling', '0015_pod_node_no_db_constraint'),
        ('scheduling', '0016_feed_bindings_skip_diff'),
        ('scheduling', '0017_pod_binding_indexes'),
        ('scheduling', '0018_session_bindings_lz4'),
        ('scheduling', '0019_session_timings_help'),
        ('scheduling', '0020_session_affinity'),
        ('scheduling', '0021_cluster_kubeconfig_encrypted'),
        ('scheduling', '0022_encrypt_kubeconfigs'),
        ('scheduling', '0023_remove_plaintext_kubeconfig'),
        ('scheduling', '0024_node_set_aside'),
        ('scheduling', '0025_kube_problem_reason'),
        ('scheduling', '0026_gang_releases'),
        ('scheduling', '0027_eviction_owners_removed_jobs'),
        ('scheduling', '0028_backfill_eviction_owners'),
        ('scheduling', '0029_job_actions'),
        ('scheduling', '0030_job_history'),
    ]

    dependencies = [
        ('quotas', '0001_squashed_0007_tree_node_description'),
        ('auth', '0012_alter_user_first_name_max_length'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Cluster',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=63, unique=True)),
                ('description', models.CharField(blank=True, default='', max_length=255)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('scheduler_policy', models.TextField(blank=True, default=scheduling.models.default_scheduler_policy, help_text="Volcano's scheduler configuration (volcano-scheduler.conf): actions and plugin tiers. Empty means Volcano's default.")),
                ('simulated', models.BooleanField(default=False, help_text='Run the simulated node agent and workload generator on this cluster (the demo).')),
                ('node_heartbeat_timeout', models.PositiveIntegerField(default=40, help_text='Seconds without a heartbeat after which a node turns NotReady and leaves the total.', validators=[django.core.validators.MinValueValidator(1)])),
                ('pod_eviction_timeout', models.PositiveIntegerField(default=300, help_text="Seconds a node may stay NotReady before its pods are marked Failed (NodeLost) and their usage is released (Kubernetes' default toleration of not-ready nodes).", validators=[django.core.validators.MinValueValidator(1)])),
                ('source', models.CharField(choices=[('agent', 'node agents (REST API)'), ('kubernetes', 'Kubernetes API server (the adapter)')], default='agent', help_text="Who feeds the cluster's nodes and pods: node agents through the API, or the Kubernetes adapter (manage.py kube_adapter) mirroring an API server.", max_length=10)),
                ('kubeconfig_encrypted', models.TextField(blank=True, default='', editable=False, help_text='source=kubernetes: the kubeconfig (YAML) the adapter connects with, encrypted with the first key of FAIRWAY_SECRET_KEYS (Fernet); blank means the in-cluster service account. Write it through ``kubeconfig`` and read it through ``read_kubeconfig()``.')),
                ('scheduler_name', models.CharField(default='fairway', help_text='source=kubernetes: the adapter mirrors and binds the pods whose spec.schedulerName is this.', max_length=63)),
                ('tree_source', models.CharField(choices=[('fairway', 'Fairway (written to the cluster)'), ('kubernetes', 'Kubernetes (read from the cluster)')], default='fairway', help_text="source=kubernetes: who owns the queue and quota trees. fairway: Fairway's edits are written to the cluster as Volcano Queues and Koordinator ElasticQuotas. kubernetes: the cluster's objects are the truth and Fairway's tree editor and API are read-only.", max_length=10)),
                ('nodes_checked_at', models.DateTimeField(blank=True, editable=False, help_text='When the node heartbeat check last ran.', null=True)),
                ('nodes_grace_from', models.DateTimeField(blank=True, editable=False, help_text='When the node check resumed after it could not run: heartbeats missed before then are forgiven.', null=True)),
            ],
            options={
                'ordering': ['name'],
            },
        ),
        migrations.CreateModel(
            name='ClusterCounters',
            fields=[
                ('cluster', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='counters', serialize=False, to='scheduling.cluster')),
                ('counts', models.JSONField(blank=True, default=dict)),
            ],
        ),
        migrations.CreateModel(
            name='ClusterFeed',
            fields=[
                ('cluster', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='feed', serialize=False, to='scheduling.cluster')),
                ('epoch', models.UUIDField(default=uuid.uuid4)),
                ('pruned_through', models.BigIntegerField(default=0)),
                ('last_mirror', models.CharField(blank=True, default='', max_length=64)),
                ('last_mirror_rev', models.BigIntegerField(default=0)),
                ('last_queue', models.CharField(blank=True, default='', max_length=200)),
                ('last_session_at', models.DateTimeField(blank=True, null=True)),
            ],
        ),
        migrations.CreateModel(
            name='Node',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=253)),
                ('allocatable', quotas.fields.ResourceListField(blank=True, default=dict)),
                ('labels', models.JSONField(blank=True, default=dict)),
                ('taints', models.JSONField(blank=True, default=list)),
                ('unschedulable', models.BooleanField(default=False)),
                ('ready', models.BooleanField(default=True)),
                ('last_heartbeat', models.DateTimeField(blank=True, null=True)),
                ('not_ready_since', models.DateTimeField(blank=True, help_text='When it turned NotReady (cleared when it is Ready again).', null=True)),
                ('set_aside', models.TextField(blank=True, help_text='Why the node is set aside (an agent or the cluster reported more than one node may have): it offers nothing until a report within the bound comes. Empty when it is not.', null=True)),
                ('pool', models.CharField(blank=True, db_index=True, default='', help_text="The named pool of nodes it belongs to; agents bound to the pool may act for it (NodeAgentBinding). Set by the admin or when a pool's agent registers the node.", max_length=63)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('updated', models.DateTimeField(auto_now=True)),
                ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='nodes', to='scheduling.cluster')),
            ],
            options={
                'ordering': ['cluster_id', 'name'],
            },
        ),
        migrations.CreateModel(
            name='NodeAgentBinding',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('node', models.CharField(blank=True, default='', help_text='One node, by name.', max_length=253)),
                ('pool', models.CharField(blank=True, default='', help_text='Or every node of a named pool.', max_length=63)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='agent_bindings', to='scheduling.cluster')),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='node_bindings', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['user_id', 'cluster_id', 'node', 'pool'],
            },
        ),
        migrations.CreateModel(
            name='PodGroup',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=253)),
                ('min_member', models.PositiveIntegerField(default=1)),
                ('min_task_member', models.JSONField(blank=True, default=dict)),
                ('min_resources', quotas.fields.ResourceListField(blank=True, null=True)),
                ('priority', models.IntegerField(default=0)),
                ('priority_class_name', models.CharField(blank=True, default='', max_length=253)),
                ('phase', models.CharField(choices=[('Pending', 'Pending'), ('Inqueue', 'Inqueue'), ('Running', 'Running'), ('Unknown', 'Unknown'), ('Completed', 'Completed')], default='Pending', max_length=10)),
                ('conditions', models.JSONField(blank=True, default=list)),
                ('reason', models.CharField(blank=True, default='', help_text='Why it is not Running.', max_length=63)),
                ('message', models.TextField(blank=True, default='', help_text='The reason with its numbers.')),
                ('blocker', models.JSONField(blank=True, help_text='The tree node, resource and numbers that block it.', null=True)),
                ('unplaced_sessions', models.PositiveIntegerField(default=0, help_text='Sessions in a row it ended Inqueue with nothing placed (the requeue rule).')),
                ('requeues', models.PositiveIntegerField(default=0, help_text='Times it gave its reservation back for lack of a place since it last ran.')),
                ('backoff_until', models.DateTimeField(blank=True, help_text='After a requeue, it is not admitted again before this moment.', null=True)),
                ('gang_releases', models.PositiveIntegerField(default=0, help_text='Times the gang was released whole after staying below its minimum too long.')),
                ('idle_gpu_seconds', models.PositiveBigIntegerField(default=0, help_text='GPU-seconds its pods held while the gang was below its minimum, over its releases.')),
                ('released_at', models.DateTimeField(blank=True, help_text='When it was last released whole.', null=True)),
                ('release_reason', models.TextField(blank=True, default='', help_text='Why it was last released whole.')),
                ('suspended_at', models.DateTimeField(blank=True, help_text='When a person suspended it: the sessions neither admit nor place it until it is resumed. Null when it is not suspended.', null=True)),
                ('suspended_by', models.CharField(blank=True, help_text='Who suspended it (a user name).', max_length=150, null=True)),
                ('deletion_requested_at', models.DateTimeField(blank=True, help_text='source=kubernetes: when a person asked to delete it; the adapter deletes its PodGroup and pods from the API server, and the row goes when the mirror sees them gone.', null=True)),
                ('deletion_requested_by', models.CharField(blank=True, help_text='Who asked to delete it (a user name).', max_length=150, null=True)),
                ('kube_owner', models.CharField(blank=True, help_text="source=kubernetes: the controller that owns its PodGroup (its ownerReference with controller: true), as 'Kind name (apiVersion)'; such a PodGroup is deleted through its owner, not by Fairway.", max_length=400, null=True)),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('updated', models.DateTimeField(auto_now=True)),
                ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='podgroups', to='scheduling.cluster')),
                ('namespace', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='podgroups', to='quotas.namespace')),
                ('queue', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='podgroups', to='quotas.queue')),
            ],
            options={
                'ordering': ['created', 'id'],
            },
        ),
        migrations.CreateModel(
            name='Pod',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=253)),
                ('task_name', models.CharField(blank=True, default='', max_length=63)),
                ('request', quotas.fields.ResourceListField(blank=True, default=dict)),
                ('priority', models.IntegerField(default=0)),
                ('preemptible', models.BooleanField(default=True)),
                ('status', models.CharField(choices=[('Pending', 'Pending'), ('Allocated', 'Allocated'), ('Pipelined', 'Pipelined'), ('Binding', 'Binding'), ('Bound', 'Bound'), ('Running', 'Running'), ('Releasing', 'Releasing'), ('Succeeded', 'Succeeded'), ('Failed', 'Failed')], default='Pending', max_length=10)),
                ('reason', models.CharField(blank=True, default='', help_text='e.g. Evicted', max_length=63)),
                ('message', models.TextField(blank=True, default='')),
                ('node_selector', models.JSONField(blank=True, default=dict)),
                ('tolerations', models.JSONField(blank=True, default=list)),
                ('labels', models.JSONField(blank=True, default=dict)),
                ('duration_seconds', models.PositiveIntegerField(blank=True, null=True, validators=[django.core.validators.MinValueValidator(0)])),
                ('created', models.DateTimeField(auto_now_add=True)),
                ('started', models.DateTimeField(blank=True, null=True)),
                ('finished', models.DateTimeField(blank=True, null=True)),
                ('updated', models.DateTimeField(auto_now=True)),
                ('cluster', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='pods', to='scheduling.cluster')),
                ('namespace', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='pods', to='quotas.namespace')),
                ('node', models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='pods', to='scheduling.node')),
                ('quota_group', models.ForeignKey(blank=True, db_index=False, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='pods', to='quotas.quotagroup')),
                ('podgroup', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='pods', to='scheduling.podgroup')),
            ],
            options={
                'ordering': ['created', 'id'],
            },
        ),
        migrations.CreateModel(
            name='QuotaOverState',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(help_text='The quota group.', max_length=253)),
                ('over_since', models.DateTimeField()),
                ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='quota_over_states', to='scheduling.cluster')),
            ],
            options={
                'ordering': ['cluster_id', 'name'],
            },
        ),
        migrations.CreateModel(
            name='QuotaSample',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('time', models.DateTimeField()),
                ('kind', models.CharField(choices=[('queue', 'Queue'), ('quota', 'Quota')], max_length=5)),
                ('name', models.CharField(max_length=253)),
                ('request', models.JSONField(default=dict)),
                ('allocated', models.JSONField(default=dict)),
                ('deserved', models.JSONField(default=dict)),
                ('borrowed', models.JSONField(default=dict)),
                ('lent', models.JSONField(default=dict)),
                ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='samples', to='scheduling.cluster')),
            ],
            options={
                'ordering': ['time', 'id'],
            },
        ),
        migrations.CreateModel(
            name='RemovedJob',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('namespace', models.CharField(max_length=63)),
                ('name', models.CharField(max_length=253)),
                ('queue', models.CharField(blank=True, default='', max_length=253)),
                ('quota_groups', models.JSONField(blank=True, default=list, help_text='The quota groups its pods counted against.')),
                ('phase', models.CharField(choices=[('Pending', 'Pending'), ('Inqueue', 'Inqueue'), ('Running', 'Running'), ('Unknown', 'Unknown'), ('Completed', 'Completed')], help_text='Its phase when removed.', max_length=10)),
                ('submitted', models.DateTimeField()),
                ('finished', models.DateTimeField(blank=True, help_text='When its last pod finished, if any did.', null=True)),
                ('removed_at', models.DateTimeField(help_text='When its row was deleted (recorded in the deleting transaction).')),
                ('cause', models.CharField(choices=[('garbage-collected', 'finished and garbage-collected'), ('deleted', 'deleted through the API'), ('kubernetes', 'deleted from its Kubernetes cluster')], max_length=20)),
                ('reason', models.TextField(blank=True, default='', help_text='Why it was removed, in a sentence.')),
                ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='removed_jobs', to='scheduling.cluster')),
            ],
            options={
                'ordering': ['-removed_at', '-id'],
            },
        ),
        migrations.CreateModel(
            name='RowChange',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('cluster_id', models.BigIntegerField()),
                ('rev', models.BigIntegerField()),
                ('kind', models.SmallIntegerField(choices=[(1, 'Node'), (2, 'Podgroup'), (3, 'Pod')])),
                ('row_id', models.BigIntegerField()),
            ],
            options={
                'ordering': ['id'],
                'indexes': [models.Index(fields=['cluster_id', 'rev'], name='rowchange_cluster_rev')],
            },
        ),
        migrations.CreateModel(
            name='SchedulingSession',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('session', 'Session'), ('recycle', 'Recycle')], default='session', max_length=8)),
                ('status', models.CharField(choices=[('ok', 'Ok'), ('failed', 'Failed'), ('skipped', 'Skipped')], default='ok', max_length=8)),
                ('started', models.DateTimeField()),
                ('finished', models.DateTimeField(blank=True, null=True)),
                ('duration_ms', models.FloatField(default=0.0)),
                ('timings', models.JSONField(blank=True, default=dict, help_text='Milliseconds per phase: load, engine, bindings_wait (the engine done, its last bindings still being written), write.')),
                ('bound', models.PositiveIntegerField(default=0)),
                ('pipelined', models.PositiveIntegerField(default=0)),
                ('evicted', models.PositiveIntegerField(default=0)),
                ('podgroups', models.JSONField(blank=True, default=dict, help_text='Podgroups per phase after the session.')),
                ('pending_pods', models.PositiveIntegerField(default=0, help_text='Pods waiting when the session opened.')),
                ('warnings', models.JSONField(blank=True, default=list)),
                ('error', models.TextField(blank=True, default='')),
                ('bindings', models.JSONField(blank=True, default=list)),
                ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='sessions', to='scheduling.cluster')),
            ],
            options={
                'ordering': ['-started', '-id'],
            },
        ),
        migrations.CreateModel(
            name='PodGroupReason',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('time', models.DateTimeField()),
                ('phase', models.CharField(choices=[('Pending', 'Pending'), ('Inqueue', 'Inqueue'), ('Running', 'Running'), ('Unknown', 'Unknown'), ('Completed', 'Completed')], max_length=10)),
                ('reason', models.CharField(blank=True, default='', max_length=63)),
                ('message', models.TextField(blank=True, default='')),
                ('blocker', models.JSONField(blank=True, null=True)),
                ('podgroup', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='reasons', to='scheduling.podgroup')),
                ('session', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='reason_rows', to='scheduling.schedulingsession')),
            ],
            options={
                'ordering': ['-time', '-id'],
            },
        ),
        migrations.CreateModel(
            name='Eviction',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('pod_uid', models.CharField(help_text='namespace/name (kept when the pod is deleted)', max_length=520)),
                ('namespace', models.CharField(max_length=63)),
                ('node', models.CharField(blank=True, default='', max_length=253)),
                ('action', models.CharField(choices=[('reclaim', 'Reclaim'), ('preempt', 'Preempt'), ('recycle', 'Recycle'), ('node-lost', 'node lost'), ('gang-release', 'gang released'), ('suspend', 'suspended by a person'), ('requeue', 'requeued by a person')], max_length=16)),
                ('reason', models.CharField(blank=True, default='', max_length=63)),
                ('message', models.TextField(blank=True, default='')),
                ('preemptor', models.CharField(blank=True, default='', max_length=520)),
                ('blocker', models.JSONField(blank=True, null=True)),
                ('created', models.DateTimeField()),
                ('api_status', models.CharField(blank=True, choices=[('pending', 'Pending'), ('refused', 'Refused'), ('done', 'Done')], default='', help_text='source=kubernetes: where the policy/v1 Eviction of the pod stands.', max_length=10)),
                ('api_attempts', models.PositiveIntegerField(default=0, help_text='Eviction API calls made for it.')),
                ('api_refusal', models.TextField(blank=True, default='', help_text='Why the API server refused the eviction last (e.g. a PodDisruptionBudget).')),
                ('api_retry_at', models.DateTimeField(blank=True, help_text='When a refused eviction is tried again.', null=True)),
                ('job', models.CharField(blank=True, default='', help_text="Its pod's podgroup (the job), by name.", max_length=253)),
                ('queue', models.CharField(blank=True, default='', help_text="The job's queue, by name.", max_length=253)),
                ('quota_group', models.CharField(blank=True, default='', help_text='The quota group its pod counted against, by name.', max_length=253)),
                ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='evictions', to='scheduling.cluster')),
                ('pod', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='evictions', to='scheduling.pod')),
                ('removed_job', models.ForeignKey(blank=True, help_text='The job once it was removed (the eviction goes with the record of its removal).', null=True, on_delete=django.db.models.deletion.CASCADE, related_name='evictions', to='scheduling.removedjob')),
                ('session', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='eviction_rows', to='scheduling.schedulingsession')),
            ],
            options={
                'ordering': ['-created', '-id'],
            },
        ),
        migrations.CreateModel(
            name='UsageHistory',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('updated', models.DateTimeField(help_text='When the session that wrote the integrals ran.')),
                ('nodes', models.JSONField(default=dict, help_text='Node key -> [used, deserved] (decayed integrals).')),
                ('cluster', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='usage_history', to='scheduling.cluster')),
            ],
            options={
                'verbose_name_plural': 'usage histories',
                'ordering': ['cluster_id'],
            },
        ),
        migrations.CreateModel(
            name='ClusterLease',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.BigIntegerField()),
                ('owner', models.CharField(blank=True, default='', max_length=64)),
                ('expires', models.DateTimeField(blank=True, null=True)),
                ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='leases', to='scheduling.cluster')),
            ],
            options={
                'ordering': ['cluster_id', 'key'],
                'constraints': [models.UniqueConstraint(fields=('cluster', 'key'), name='cluster_lease_unique')],
            },
        ),
        migrations.CreateModel(
            name='JobRecord',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('namespace', models.CharField(max_length=63)),
                ('name', models.CharField(max_length=253)),
                ('queue', models.CharField(max_length=253)),
                ('quota_group', models.CharField(blank=True, default='', max_length=253)),
                ('priority', models.IntegerField(default=0)),
                ('preemptible', models.BooleanField(default=True)),
                ('min_member', models.PositiveIntegerField(default=1)),
                ('roles', models.JSONField(default=list, help_text='[[role, pods, {resource: base units}], ...]')),
                ('min_resources', models.JSONField(blank=True, help_text='Its minResources (base units) where they are not the requests of its first minMember pods (the usual, kept as null); {}: none.', null=True)),
                ('submitted', models.DateTimeField()),
                ('started', models.DateTimeField(blank=True, help_text='When its first pod started.', null=True)),
                ('finished', models.DateTimeField(blank=True, help_text='When its last pod finished (all finished).', null=True)),
                ('runtime', models.FloatField(blank=True, help_text='Seconds of work of its longest finished pod run.', null=True)),
                ('pod_runtimes', models.JSONField(blank=True, help_text="Each pod's seconds of work (roles in order) where they differ (null: all ran runtime).", null=True)),
                ('evictions', models.PositiveIntegerField(default=0)),
                ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='job_records', to='scheduling.cluster')),
            ],
            options={
                'indexes': [models.Index(fields=['cluster', 'submitted'], name='scheduling__cluster_001685_idx')],
            },
        ),
        migrations.CreateModel(
            name='KubeObjectProblem',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(max_length=63)),
                ('namespace', models.CharField(blank=True, default='', max_length=63)),
                ('name', models.CharField(max_length=253)),
                ('message', models.TextField()),
                ('reason', models.CharField(default='FairwayInvalid', help_text="The Event's reason: FairwayInvalid (not applied) or FairwayHeldToRange (applied, its priority or preemptibility held to its queue's range).", max_length=63)),
                ('resource_version', models.CharField(blank=True, default='', max_length=63)),
                ('first_seen', models.DateTimeField()),
                ('last_seen', models.DateTimeField()),
                ('event_sent', models.BooleanField(default=False, help_text='A Kubernetes Event was created for this message.')),
                ('cluster', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='kube_problems', to='scheduling.cluster')),
            ],
            options={
                'ordering': ['cluster_id', 'kind', 'namespace', 'name'],
                'constraints': [models.UniqueConstraint(fields=('cluster', 'kind', 'namespace', 'name'), name='kube_problem_unique')],
            },
        ),
        migrations.AddConstraint(
            model_name='node',
            constraint=models.UniqueConstraint(fields=('cluster', 'name'), name='node_unique_name_per_cluster'),
        ),
        migrations.AddConstraint(
            model_name='nodeagentbinding',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('node', ''), models.Q(('pool', ''), _negated=True)), models.Q(models.Q(('node', ''), _negated=True), ('pool', '')), _connector='OR'), name='node_agent_binding_node_xor_pool'),
        ),
        migrations.AddConstraint(
            model_name='nodeagentbinding',
            constraint=models.UniqueConstraint(fields=('user', 'cluster', 'node', 'pool'), name='node_agent_binding_unique'),
        ),
        migrations.AddIndex(
            model_name='podgroup',
            index=models.Index(fields=['queue', 'phase'], name='scheduling__queue_i_f85c36_idx'),
        ),
        migrations.AddConstraint(
            model_name='podgroup',
            constraint=models.UniqueConstraint(fields=('cluster', 'namespace', 'name'), name='podgroup_unique_name'),
        ),
        migrations.AddIndex(
            model_name='pod',
            index=models.Index(fields=['status'], name='scheduling__status_dbe857_idx'),
        ),
        migrations.AddIndex(
            model_name='pod',
            index=models.Index(fields=['node', 'status'], name='scheduling__node_id_74749c_idx'),
        ),
        migrations.AddConstraint(
            model_name='pod',
            constraint=models.UniqueConstraint(fields=('cluster', 'namespace', 'name'), name='pod_unique_name'),
        ),
        migrations.AddConstraint(
            model_name='quotaoverstate',
            constraint=models.UniqueConstraint(fields=('cluster', 'name'), name='quota_over_state_unique'),
        ),
        migrations.AddIndex(
            model_name='quotasample',
            index=models.Index(fields=['cluster', 'kind', 'name', 'time'], name='scheduling__cluster_0939e7_idx'),
        ),
        migrations.AddIndex(
            model_name='quotasample',
            index=models.Index(fields=['time'], name='scheduling__time_97e6a0_idx'),
        ),
        migrations.AddIndex(
            model_name='removedjob',
            index=models.Index(fields=['cluster', 'namespace', 'name', 'removed_at'], name='scheduling__cluster_d86d23_idx'),
        ),
        migrations.AddIndex(
            model_name='removedjob',
            index=models.Index(fields=['cluster', 'removed_at'], name='scheduling__cluster_0e5754_idx'),
        ),
        migrations.AddIndex(
            model_name='schedulingsession',
            index=models.Index(fields=['cluster', 'started'], name='scheduling__cluster_782efb_idx'),
        ),
        migrations.AddIndex(
            model_name='schedulingsession',
            index=models.Index(fields=['status', 'started'], name='scheduling__status_8f7e15_idx'),
        ),
        migrations.AddIndex(
            model_name='podgroupreason',
            index=models.Index(fields=['podgroup', 'time'], name='scheduling__podgrou_21e5f4_idx'),
        ),
        migrations.AddIndex(
            model_name='eviction',
            index=models.Index(fields=['cluster', 'created'], name='scheduling__cluster_d42305_idx'),
        ),
        migrations.AddIndex(
            model_name='eviction',
            index=models.Index(fields=['queue', 'created'], name='scheduling__queue_8dcd59_idx'),
        ),
        migrations.AddIndex(
            model_name='eviction',
            index=models.Index(fields=['quota_group', 'created'], name='scheduling__quota_g_034142_idx'),
        ),
        # going back drops the tables (deleting the rows first would leave PostgreSQL's deferred foreign key checks
        # pending on a table to drop) and leaves the group, a row of auth's
        migrations.RunPython(create_default_cluster, migrations.RunPython.noop),
        migrations.RunPython(create_node_agents_group, migrations.RunPython.noop),
        migrations.RunPython(compress_bindings_lz4, compress_bindings_pglz),
        # the triggers of the columns the tables have here (a later migration that logs more makes them again)
        triggers.RunSQLOn(
            "postgresql", triggers.postgresql_create(triggers.INITIAL_COLUMNS), triggers.POSTGRESQL_DROP
        ),
        triggers.RunSQLOn("sqlite", triggers.sqlite_create(triggers.INITIAL_COLUMNS), triggers.SQLITE_DROP),
    ]
