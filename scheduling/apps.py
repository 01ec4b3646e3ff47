from django.apps import AppConfig


class SchedulingConfig(AppConfig):
    name = "scheduling"
    verbose_name = "Cluster and scheduling"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        """Connect this app's signal receivers and tell the trees which resource names the nodes offer and
        what each cluster has (for the warnings of a tree write). ``affinity`` connects the Celery worker's
        handler that gives it a queue of its own."""
        from controlplane import cluster_facts, resource_names, tree_owner
        from scheduling import affinity, signals  # noqa: F401 - affinity: its Celery signal handler
        from scheduling.cluster_facts import cluster_facts as read_cluster_facts
        from scheduling.cluster_facts import mirrored_cluster_names, tree_owning_cluster
        from scheduling.resource_names import offered_names

        signals.connect()
        resource_names.register(offered_names)
        cluster_facts.register(read_cluster_facts)
        cluster_facts.register_mirrored(mirrored_cluster_names)
        tree_owner.register(tree_owning_cluster)
