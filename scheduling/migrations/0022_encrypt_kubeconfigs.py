"""Every stored kubeconfig encrypted with the first key of FAIRWAY_SECRET_KEYS (security.crypto), and the plaintext
column emptied; the next migration drops it. Reversible: going back decrypts into the plaintext column."""

from django.db import migrations


def encrypt_kubeconfigs(apps, schema_editor):
    from security.crypto import encrypt

    Cluster = apps.get_model("scheduling", "Cluster")
    for cluster in Cluster.objects.exclude(kubeconfig="").only("pk", "kubeconfig"):
        Cluster.objects.filter(pk=cluster.pk).update(kubeconfig_encrypted=encrypt(cluster.kubeconfig), kubeconfig="")


def decrypt_kubeconfigs(apps, schema_editor):
    from security.crypto import decrypt

    Cluster = apps.get_model("scheduling", "Cluster")
    for cluster in Cluster.objects.exclude(kubeconfig_encrypted="").only("pk", "kubeconfig_encrypted"):
        Cluster.objects.filter(pk=cluster.pk).update(kubeconfig=decrypt(cluster.kubeconfig_encrypted))


class Migration(migrations.Migration):

    dependencies = [
        ('scheduling', '0021_cluster_kubeconfig_encrypted'),
    ]

    operations = [
        migrations.RunPython(encrypt_kubeconfigs, decrypt_kubeconfigs),
    ]
