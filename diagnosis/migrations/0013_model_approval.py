# Approval before use (issue 27): a model is a draft until a model administrator approves it.
# Every model that exists already is in use, so it is marked approved (nothing disappears from
# a clinician); new trainings are drafts (the field's default after this migration).

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def _existing_models_approved(apps, schema_editor):
    """Say why the models already in use are approved (the AddField default marked them)."""
    TrainedModel = apps.get_model("diagnosis", "TrainedModel")
    TrainedModel.objects.filter(approval="approved").update(
        approval_reason="In use before approval existed (migration 0013).",
        approval_at=django.utils.timezone.now(),
    )


class Migration(migrations.Migration):
    dependencies = [
        ("diagnosis", "0012_case_matrix_snapshot"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="trainedmodel",
            name="approval",
            field=models.CharField(
                choices=[("draft", "Draft"), ("approved", "Approved"), ("retired", "Retired")],
                default="approved",
                help_text="Draft until a model administrator approves it; retired when withdrawn.",
                max_length=10,
            ),
        ),
        migrations.AlterField(
            model_name="trainedmodel",
            name="approval",
            field=models.CharField(
                choices=[("draft", "Draft"), ("approved", "Approved"), ("retired", "Retired")],
                default="draft",
                help_text="Draft until a model administrator approves it; retired when withdrawn.",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="trainedmodel",
            name="approval_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="trainedmodel",
            name="approval_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="approval_changes",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="trainedmodel",
            name="approval_reason",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="trainedmodel",
            name="replacement_comparison",
            field=models.JSONField(
                blank=True,
                default=dict,
                help_text=(
                    "This model and the one it replaces on the same held-out patients, "
                    "priced with this model's prices and matrix."
                ),
            ),
        ),
        migrations.AddField(
            model_name="trainedmodel",
            name="replaces",
            field=models.ForeignKey(
                blank=True,
                help_text=(
                    "The approved model this retrain would replace (approving it retires that one)."
                ),
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="replacements",
                to="diagnosis.trainedmodel",
            ),
        ),
        migrations.RunPython(_existing_models_approved, migrations.RunPython.noop),
        migrations.CreateModel(
            name="ModelDecision",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "action",
                    models.CharField(
                        choices=[
                            ("approve", "approved"),
                            ("retire", "retired"),
                            ("roll-back", "rolled back to the previously approved model"),
                            ("keep-old", "kept the model in use and retired this retrain"),
                        ],
                        max_length=10,
                    ),
                ),
                ("username", models.CharField(max_length=150)),
                ("at", models.DateTimeField(default=django.utils.timezone.now)),
                ("reason", models.TextField(blank=True)),
                ("basis", models.JSONField(blank=True, default=dict)),
                (
                    "other_model",
                    models.ForeignKey(
                        blank=True,
                        help_text="The model retired or approved together with this one.",
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="diagnosis.trainedmodel",
                    ),
                ),
                (
                    "trained_model",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="decisions",
                        to="diagnosis.trainedmodel",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-at", "-id"],
            },
        ),
    ]
