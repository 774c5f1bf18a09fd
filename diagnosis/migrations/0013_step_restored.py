# A corrected value can be restored (its correction undone): it counts again and keeps the
# correction's record.  Existing rows are unchanged ("restored" is a new value).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("diagnosis", "0012_case_matrix_snapshot"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="diagnosisstep", name="step_correction_marked"),
        migrations.AlterField(
            model_name="diagnosisstep",
            name="correction",
            field=models.CharField(
                blank=True,
                choices=[
                    ("corrected", "Value corrected"),
                    ("undone", "Undone"),
                    ("restored", "Correction undone"),
                ],
                default="",
                max_length=12,
            ),
        ),
        migrations.AddConstraint(
            model_name="diagnosisstep",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("corrected_at__isnull", True),
                        ("correction", ""),
                        ("superseded_by__isnull", True),
                    ),
                    models.Q(
                        ("corrected_at__isnull", False),
                        ("correction", "undone"),
                        ("superseded_by__isnull", True),
                    ),
                    models.Q(
                        ("corrected_at__isnull", False),
                        ("correction__in", ["corrected", "restored"]),
                        ("superseded_by__isnull", False),
                    ),
                    _connector="OR",
                ),
                name="step_correction_marked",
            ),
        ),
    ]
