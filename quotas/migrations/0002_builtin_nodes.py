"""The built-in tree nodes: queues root and default; quota groups root, system and default; cluster default."""

from django.db import migrations

from quotas.migrations import _builtins


def create_builtins(apps, schema_editor):
    _builtins.create(apps.get_model("quotas", "Queue"), apps.get_model("quotas", "QuotaGroup"))


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
