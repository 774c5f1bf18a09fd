"""An experiment's dataset is now the catalog app's ``Dataset`` (state only: the column and its
foreign key stay as they are)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('bench', '0001_initial'),
        ('catalog', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='experiment',
                    name='dataset',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='experiments', to='catalog.dataset'),
                ),
            ],
            database_operations=[],
        ),
    ]
