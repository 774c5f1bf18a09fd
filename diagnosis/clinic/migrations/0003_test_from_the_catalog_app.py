"""A step's test is now the catalog app's ``DiagnosticTest`` (state only: the column and its
foreign key stay as they are)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0001_initial'),
        ('clinic', '0002_trained_model_from_the_training_app'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='diagnosisstep',
                    name='test',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='steps', to='catalog.diagnostictest'),
                ),
            ],
            database_operations=[],
        ),
    ]
