"""The built-in tree nodes, shared by the initial migration and ``services.ensure_builtins``."""

BIG = 2**62  # the "unlimited" max of the system and default groups, in base units


def create(Queue, QuotaGroup, using: str = "default") -> None:  # model classes, historical or current; a database
    queues, groups = Queue.objects.using(using), QuotaGroup.objects.using(using)
    root, _ = queues.get_or_create(name="root", defaults={"weight": 1, "reclaimable": False})
    queues.get_or_create(name="default", defaults={"parent": root, "weight": 1, "reclaimable": True})
    groot, _ = groups.get_or_create(name="root", defaults={"is_parent": True, "allow_lent": False})
    unlimited = {"cpu": BIG, "memory": BIG}
    groups.get_or_create(
        name="system", defaults={"parent": groot, "max": unlimited, "min": unlimited, "shared_weight": unlimited}
    )
    groups.get_or_create(name="default", defaults={"parent": groot, "max": unlimited, "shared_weight": unlimited})
