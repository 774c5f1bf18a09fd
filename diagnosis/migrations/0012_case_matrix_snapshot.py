# Written by hand (other sessions' model changes were uncommitted): the case's matrix in force.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("diagnosis", "0011_generated_prices"),
    ]

    operations = [
        migrations.AddField(
            model_name="diagnosiscase",
            name="matrix_snapshot",
            field=models.JSONField(
                blank=True,
                help_text="Error matrix in force when the case started; empty = the model's own.",
                null=True,
            ),
        ),
    ]
