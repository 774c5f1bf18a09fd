"""The cases' tables now belong to the clinic app (``diagnosis.clinic``): cases, their steps,
confirmed diagnoses, the case access log and the teams.

Only Django's record of the models moves: the tables keep their names and rows (the clinic's
models name them in ``db_table``; the teams' member and lead tables follow ``diagnosis_team``),
and their content types move with them, so the permissions granted on them (and the admin's log
entries) still point at the same rows.
"""

from django.db import migrations

MOVED = ("diagnosiscase", "diagnosisstep", "confirmeddiagnosis", "caseaccess", "team")


def content_types_to_the_clinic(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    # a content type the clinic got before this ran (none on a database migrated in one go)
    content_type.objects.filter(app_label="clinic", model__in=MOVED).delete()
    content_type.objects.filter(app_label="diagnosis", model__in=MOVED).update(app_label="clinic")


def content_types_back(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="clinic", model__in=MOVED).update(app_label="diagnosis")


class Migration(migrations.Migration):
    dependencies = [
        ("diagnosis", "0019_api_tokens_to_the_integration_app"),
        ("clinic", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name="confirmeddiagnosis", name="case"),
                migrations.RemoveField(model_name="confirmeddiagnosis", name="recorded_by"),
                migrations.RemoveField(model_name="diagnosiscase", name="clinician"),
                migrations.RemoveField(model_name="diagnosiscase", name="trained_model"),
                migrations.RemoveField(model_name="diagnosisstep", name="case"),
                migrations.RemoveField(model_name="diagnosisstep", name="corrected_by"),
                migrations.RemoveField(model_name="diagnosisstep", name="created_by"),
                migrations.RemoveField(model_name="diagnosisstep", name="superseded_by"),
                migrations.RemoveField(model_name="diagnosisstep", name="test"),
                migrations.RemoveField(model_name="team", name="leads"),
                migrations.RemoveField(model_name="team", name="members"),
                migrations.DeleteModel(name="CaseAccess"),
                migrations.DeleteModel(name="ConfirmedDiagnosis"),
                migrations.DeleteModel(name="DiagnosisCase"),
                migrations.DeleteModel(name="DiagnosisStep"),
                migrations.DeleteModel(name="Team"),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_to_the_clinic, content_types_back),
    ]
