# The revision counters now belong to core (core.0001): quotas forgets the model; the table stays.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("quotas", "0001_squashed_0007_tree_node_description"),
        ("core", "0001_revision_from_quotas"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="Revision")],
            database_operations=[],
        ),
    ]
