"""A job's history row keeps its submitter's groups too: a trace replays the per-user limits of groups with them."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("scheduling", "0042_jobrecord_user_gpu_seconds"),
    ]

    operations = [
        migrations.AddField(
            model_name="jobrecord",
            name="user_groups",
            field=models.JSONField(blank=True, default=list, help_text="That user's groups (the per-user limits')."),
        ),
    ]
