"""The built-in tree nodes: queues root and default; quota groups root, system and default; cluster default."""

from django.db import migrations

BIG = 2**62  # "unlimited" max of the system and default groups, in base units


def create_builtins(apps, schema_editor):
    Queue = apps.get_model("quotas", "Queue")
    QuotaGroup = apps.get_model("quotas", "QuotaGroup")
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


def remove_builtins(apps, schema_editor):
    Queue = apps.get_model("quotas", "Queue")
    QuotaGroup = apps.get_model("quotas", "QuotaGroup")
    Queue.objects.filter(name="default").delete()
    Queue.objects.filter(name="root").delete()
    QuotaGroup.objects.filter(name__in=["system", "default"]).delete()
    QuotaGroup.objects.filter(name="root").delete()


class Migration(migrations.Migration):
    dependencies = [("quotas", "0001_initial")]
    operations = [migrations.RunPython(create_builtins, remove_builtins)]
