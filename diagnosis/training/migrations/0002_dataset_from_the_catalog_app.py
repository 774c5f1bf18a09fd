"""A trained model's dataset and error matrix are now the catalog app's (state only: the
columns and their foreign keys stay as they are)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0001_initial'),
        ('training', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='trainedmodel',
                    name='dataset',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='trained_models', to='catalog.dataset'),
                ),
                migrations.AlterField(
                    model_name='trainedmodel',
                    name='error_matrix',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='trained_models', to='catalog.errormatrix'),
                ),
            ],
            database_operations=[],
        ),
    ]
