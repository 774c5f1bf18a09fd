"""The API tokens' table now belongs to the integration app (``diagnosis.integration``).

Only Django's record of the model moves: the table keeps its name and rows (the integration's
model names it in ``db_table``), and its content type moves with it, so the permissions
granted on it (and the admin's log entries) still point at the same rows.
"""

from django.db import migrations

MOVED = ("apitoken",)


def content_types_to_the_integration(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    # a content type the integration got before this ran (none on a database migrated in one go)
    content_type.objects.filter(app_label="integration", model__in=MOVED).delete()
    content_type.objects.filter(app_label="diagnosis", model__in=MOVED).update(
        app_label="integration"
    )


def content_types_back(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="integration", model__in=MOVED).update(
        app_label="diagnosis"
    )


class Migration(migrations.Migration):
    dependencies = [
        ("diagnosis", "0018_experiments_to_the_bench_app"),
        ("integration", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="ApiToken"),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_to_the_integration, content_types_back),
    ]
