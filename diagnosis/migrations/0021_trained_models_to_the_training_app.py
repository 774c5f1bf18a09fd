"""The trained models' tables now belong to the training app (``diagnosis.training``): trained
models, their checkpoints, approval decisions and the selection's candidate measurements.

Only Django's record of the models moves: the tables keep their names and rows (the training's
models name them in ``db_table``), and their content types move with them, so the permissions
granted on them (and the admin's log entries) still point at the same rows.  The clinic's cases
point at the training's model first (``clinic/0002``).
"""

from django.db import migrations

MOVED = ("trainedmodel", "trainingcheckpoint", "modeldecision", "candidatemeasurement")


def content_types_to_the_training(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    # a content type the training got before this ran (none on a database migrated in one go)
    content_type.objects.filter(app_label="training", model__in=MOVED).delete()
    content_type.objects.filter(app_label="diagnosis", model__in=MOVED).update(
        app_label="training"
    )


def content_types_back(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="training", model__in=MOVED).update(
        app_label="diagnosis"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("diagnosis", "0020_cases_to_the_clinic_app"),
        ("training", "0001_initial"),
        ("clinic", "0002_trained_model_from_the_training_app"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name="modeldecision", name="other_model"),
                migrations.RemoveField(model_name="modeldecision", name="trained_model"),
                migrations.RemoveField(model_name="modeldecision", name="user"),
                migrations.RemoveField(model_name="trainedmodel", name="approval_by"),
                migrations.RemoveField(model_name="trainedmodel", name="created_by"),
                migrations.RemoveField(model_name="trainedmodel", name="dataset"),
                migrations.RemoveField(model_name="trainedmodel", name="error_matrix"),
                migrations.RemoveField(model_name="trainedmodel", name="replaces"),
                migrations.RemoveField(model_name="trainingcheckpoint", name="trained_model"),
                migrations.DeleteModel(name="CandidateMeasurement"),
                migrations.DeleteModel(name="ModelDecision"),
                migrations.DeleteModel(name="TrainedModel"),
                migrations.DeleteModel(name="TrainingCheckpoint"),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_to_the_training, content_types_back),
    ]
