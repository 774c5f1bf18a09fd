"""The catalog's tables now belong to the catalog app (``diagnosis.catalog``): datasets, their
cases, tests, groups and error matrices, and their change history (django-simple-history's
historical tables).

Only Django's record of the models moves: the tables keep their names and rows (the catalog's
models name them in ``db_table``, the history in ``table_name``), and their content types move
with them, so the permissions granted on them (and the admin's log entries) still point at the
same rows.  The apps that point at the catalog point at the catalog app's models first
(``training/0002``, ``clinic/0003``, ``bench/0002``).  After this the diagnosis app keeps no
model: only its migrations, the record of how the tables came to be.
"""

from django.db import migrations

MOVED = (
    "dataset",
    "datasetcase",
    "testgroup",
    "diagnostictest",
    "errormatrix",
    "historicaldataset",
    "historicaltestgroup",
    "historicaldiagnostictest",
    "historicalerrormatrix",
)


def content_types_to_the_catalog(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    # a content type the catalog got before this ran (none on a database migrated in one go)
    content_type.objects.filter(app_label="catalog", model__in=MOVED).delete()
    content_type.objects.filter(app_label="diagnosis", model__in=MOVED).update(app_label="catalog")


def content_types_back(apps, schema_editor):
    content_type = apps.get_model("contenttypes", "ContentType")
    content_type.objects.filter(app_label="catalog", model__in=MOVED).update(app_label="diagnosis")


class Migration(migrations.Migration):
    dependencies = [
        ("diagnosis", "0021_trained_models_to_the_training_app"),
        ("catalog", "0001_initial"),
        ("training", "0002_dataset_from_the_catalog_app"),
        ("clinic", "0003_test_from_the_catalog_app"),
        ("bench", "0002_dataset_from_the_catalog_app"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name="testgroup", name="dataset"),
                migrations.RemoveField(model_name="diagnostictest", name="dataset"),
                migrations.RemoveField(model_name="historicaltestgroup", name="dataset"),
                migrations.RemoveField(model_name="historicaldiagnostictest", name="dataset"),
                migrations.RemoveField(model_name="historicalerrormatrix", name="dataset"),
                migrations.RemoveField(model_name="errormatrix", name="dataset"),
                migrations.RemoveField(model_name="diagnostictest", name="group"),
                migrations.RemoveField(model_name="historicaldataset", name="history_user"),
                migrations.RemoveField(model_name="historicaldiagnostictest", name="group"),
                migrations.RemoveField(model_name="historicaldiagnostictest", name="history_user"),
                migrations.RemoveField(model_name="historicalerrormatrix", name="history_user"),
                migrations.RemoveField(model_name="historicaltestgroup", name="history_user"),
                migrations.DeleteModel(name="DatasetCase"),
                migrations.DeleteModel(name="Dataset"),
                migrations.DeleteModel(name="ErrorMatrix"),
                migrations.DeleteModel(name="DiagnosticTest"),
                migrations.DeleteModel(name="HistoricalDataset"),
                migrations.DeleteModel(name="TestGroup"),
                migrations.DeleteModel(name="HistoricalDiagnosticTest"),
                migrations.DeleteModel(name="HistoricalErrorMatrix"),
                migrations.DeleteModel(name="HistoricalTestGroup"),
            ],
            database_operations=[],
        ),
        migrations.RunPython(content_types_to_the_catalog, content_types_back),
    ]
