from django.apps import AppConfig


class SchedulingConfig(AppConfig):
    name = "scheduling"
    verbose_name = "Cluster and scheduling"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        """Connect this app's signal receivers and answer the lower apps' questions about the clusters
        (``core.facts``: the resource names the nodes offer, each cluster's total, the mirrored clusters, the trees'
        owner). ``affinity`` connects the Celery worker's handler that gives it a queue of its own."""
        from core import facts
        from scheduling import signals
        from scheduling.facts import DatabaseFacts
        from scheduling.feed import affinity  # noqa: F401 - its Celery signal handler

        signals.connect()
        facts.provide(DatabaseFacts())
