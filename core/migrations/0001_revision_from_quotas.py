# The revision counters move from quotas to core (the kernel): the state only; the table keeps its name.

from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("quotas", "0001_squashed_0007_tree_node_description"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Revision",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("key", models.CharField(max_length=64, unique=True)),
                        ("value", models.PositiveBigIntegerField(default=0)),
                    ],
                    options={"db_table": "quotas_revision"},
                ),
            ],
            database_operations=[],
        ),
    ]
