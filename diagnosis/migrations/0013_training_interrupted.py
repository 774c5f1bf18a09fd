"""A training whose worker died mid-run ends "interrupted", not "succeeded" (issue 29).

Rows that an earlier sweep ended "succeeded" with the partial model of a dead worker (their
progress message said so) are relabelled "interrupted": they were cut short.
"""

from django.db import migrations, models

CUT_SHORT = "Interrupted; using the best model so far"


def relabel_cut_short(apps, schema_editor):
    TrainedModel = apps.get_model("diagnosis", "TrainedModel")
    TrainedModel.objects.filter(status="succeeded", progress_message=CUT_SHORT).update(
        status="interrupted",
        progress_message="Interrupted: the worker died; this model was cut short",
    )


def restore_succeeded(apps, schema_editor):
    TrainedModel = apps.get_model("diagnosis", "TrainedModel")
    TrainedModel.objects.filter(status="interrupted").update(
        status="succeeded", progress_message=CUT_SHORT
    )


class Migration(migrations.Migration):
    dependencies = [
        ("diagnosis", "0012_case_matrix_snapshot"),
    ]

    operations = [
        migrations.AlterField(
            model_name="trainedmodel",
            name="status",
            field=models.CharField(
                choices=[
                    ("queued", "Queued"),
                    ("running", "Running"),
                    ("succeeded", "Succeeded"),
                    ("failed", "Failed"),
                    ("cancelled", "Cancelled"),
                    ("interrupted", "Interrupted (cut short)"),
                ],
                default="queued",
                max_length=12,
            ),
        ),
        migrations.RunPython(relabel_cut_short, restore_succeeded),
    ]
