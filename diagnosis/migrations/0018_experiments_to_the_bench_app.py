"""The experiments' tables now belong to the bench app (``diagnosis.bench``).

Only Django's record of the models moves: the tables keep their names and rows (the bench's
models name them in ``db_table``), and their content types move with them, so the permissions
granted on them (and the admin's log entries) still point at the same rows.
"""

from django.db import migrations

MOVED = ("experiment", "experimenttask")


def content_types_to_the_bench(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    # a content type the bench got before this ran (none on a database migrated in one go)
    content_type.objects.filter(app_label="bench", model__in=MOVED).delete()
    content_type.objects.filter(app_label="diagnosis", model__in=MOVED).update(app_label="bench")


def content_types_back(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="bench", model__in=MOVED).update(app_label="diagnosis")


class Migration(migrations.Migration):
    dependencies = [
        ("diagnosis", "0017_merge_plausible_ranges_selection_cut_short"),
        ("bench", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name="experimenttask", name="experiment"),
                migrations.RemoveField(model_name="experimenttask", name="lead"),
                migrations.DeleteModel(name="Experiment"),
                migrations.DeleteModel(name="ExperimentTask"),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_to_the_bench, content_types_back),
    ]
