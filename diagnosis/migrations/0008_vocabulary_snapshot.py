"""Every trained model keeps the words of its codes (class names, nominal choices).

Models trained before this get today's words, which is what they showed until now; from
here on no later edit of the dataset changes them.
"""

from django.db import migrations


def freeze_vocabulary(apps, schema_editor):
    TrainedModel = apps.get_model("diagnosis", "TrainedModel")
    DiagnosticTest = apps.get_model("diagnosis", "DiagnosticTest")
    for trained in TrainedModel.objects.select_related("dataset").iterator():
        snapshot = dict(trained.cost_snapshot or {})
        if "vocabulary" in snapshot:
            continue
        tests = DiagnosticTest.objects.filter(dataset_id=trained.dataset_id, kind="nominal")
        snapshot["vocabulary"] = {
            "class_labels": [str(c) for c in trained.dataset.class_labels],
            "choices": {
                t.name: [{"code": int(c["code"]), "label": str(c["label"])} for c in t.choices or []]
                for t in tests.order_by("index")
            },
        }
        TrainedModel.objects.filter(pk=trained.pk).update(cost_snapshot=snapshot)


class Migration(migrations.Migration):
    dependencies = [("diagnosis", "0007_api_tokens")]

    operations = [migrations.RunPython(freeze_vocabulary, migrations.RunPython.noop)]
