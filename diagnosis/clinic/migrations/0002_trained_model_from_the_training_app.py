"""A case's model is now the training app's ``TrainedModel`` (state only: the column and its
foreign key to diagnosis_trainedmodel stay as they are)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('clinic', '0001_initial'),
        ('training', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='diagnosiscase',
                    name='trained_model',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='cases', to='training.trainedmodel'),
                ),
            ],
            database_operations=[],
        ),
    ]
