"""The built-in tree nodes, shared by the data migration and ``services.ensure_builtins``."""

BIG = 2**62  # the "unlimited" max of the system and default groups, in base units


def create(Queue, QuotaGroup) -> None:  # model classes, historical or current
    root, _ = Queue.objects.get_or_create(name="root", defaults={"weight": 1, "reclaimable": False})
    Queue.objects.get_or_create(name="default", defaults={"parent": root, "weight": 1, "reclaimable": True})
    groot, _ = QuotaGroup.objects.get_or_create(name="root", defaults={"is_parent": True, "allow_lent": False})
    unlimited = {"cpu": BIG, "memory": BIG}
    QuotaGroup.objects.get_or_create(
        name="system", defaults={"parent": groot, "max": unlimited, "min": unlimited, "shared_weight": unlimited}
    )
    QuotaGroup.objects.get_or_create(
        name="default", defaults={"parent": groot, "max": unlimited, "shared_weight": unlimited}
    )
