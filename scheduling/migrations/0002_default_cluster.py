from django.db import migrations


def create_default_cluster(apps, schema_editor):
    apps.get_model("scheduling", "Cluster").objects.get_or_create(
        name="default", defaults={"description": "The cluster this control plane manages"}
    )


def remove_default_cluster(apps, schema_editor):
    apps.get_model("scheduling", "Cluster").objects.filter(name="default", nodes__isnull=True).delete()


class Migration(migrations.Migration):
    dependencies = [("scheduling", "0001_initial")]
    operations = [migrations.RunPython(create_default_cluster, remove_default_cluster)]
