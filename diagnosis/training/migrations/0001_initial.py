"""The training's models, taken over from the diagnosis app with their tables (state only:
the tables exist since diagnosis's 0001-0016 and keep their names and rows)."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('diagnosis', '0020_cases_to_the_clinic_app'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='TrainedModel',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(blank=True, max_length=200)),
                        ('learner', models.CharField(help_text='Key in the learner registry.', max_length=50)),
                        ('params', models.JSONField(blank=True, default=dict)),
                        ('cost_snapshot', models.JSONField(blank=True, default=dict, help_text='CostModel.to_dict() plus test names, at training time.')),
                        ('matrix_snapshot', models.JSONField(blank=True, default=list)),
                        ('reject_cost_snapshot', models.FloatField(blank=True, null=True)),
                        ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('succeeded', 'Succeeded'), ('failed', 'Failed'), ('cancelled', 'Cancelled'), ('interrupted', 'Interrupted (cut short)')], default='queued', max_length=12)),
                        ('progress', models.FloatField(default=0.0)),
                        ('progress_message', models.CharField(blank=True, max_length=300)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('heartbeat_at', models.DateTimeField(blank=True, null=True)),
                        ('fit_seconds', models.FloatField(blank=True, null=True)),
                        ('metrics', models.JSONField(blank=True, default=dict)),
                        ('model_json', models.TextField(blank=True)),
                        ('error', models.TextField(blank=True)),
                        ('celery_task_id', models.CharField(blank=True, max_length=100)),
                        ('enqueued_at', models.DateTimeField(blank=True, help_text='Last handed to the task queue; empty = not yet (outbox).', null=True)),
                        ('attempts', models.PositiveIntegerField(default=0, help_text='Times a worker has started this training (a killed one is retried).')),
                        ('stop_requested', models.BooleanField(default=False, help_text='An anytime training ends at the next check and keeps its best model so far.')),
                        ('anytime_round', models.CharField(blank=True, help_text='The anytime round whose model is in use (e.g. "r=4"); blank otherwise.', max_length=100)),
                        ('approval', models.CharField(choices=[('draft', 'Draft'), ('approved', 'Approved'), ('retired', 'Retired')], default='draft', help_text='Draft until a model administrator approves it; retired when withdrawn.', max_length=10)),
                        ('approval_at', models.DateTimeField(blank=True, null=True)),
                        ('approval_reason', models.TextField(blank=True)),
                        ('cut_short', models.BooleanField(default=False, help_text='Approved although its training was cut short by a dead worker.')),
                        ('replacement_comparison', models.JSONField(blank=True, default=dict, help_text="This model and the one it replaces on the same held-out patients, priced with this model's prices and matrix.")),
                        ('approval_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='approval_changes', to=settings.AUTH_USER_MODEL)),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='trained_models', to=settings.AUTH_USER_MODEL)),
                        ('dataset', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='trained_models', to='diagnosis.dataset')),
                        ('error_matrix', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='trained_models', to='diagnosis.errormatrix')),
                        ('replaces', models.ForeignKey(blank=True, help_text='The approved model this retrain would replace (approving it retires that one).', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='replacements', to='training.trainedmodel')),
                    ],
                    options={
                        'db_table': 'diagnosis_trainedmodel',
                        'ordering': ['-created_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='ModelDecision',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('action', models.CharField(choices=[('approve', 'approved'), ('retire', 'retired'), ('roll-back', 'rolled back to the previously approved model'), ('keep-old', 'kept the model in use and retired this retrain')], max_length=10)),
                        ('username', models.CharField(max_length=150)),
                        ('at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('reason', models.TextField(blank=True)),
                        ('basis', models.JSONField(blank=True, default=dict)),
                        ('user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('other_model', models.ForeignKey(blank=True, help_text='The model retired or approved together with this one.', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='training.trainedmodel')),
                        ('trained_model', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='decisions', to='training.trainedmodel')),
                    ],
                    options={
                        'db_table': 'diagnosis_modeldecision',
                        'ordering': ['-at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='TrainingCheckpoint',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('elapsed_seconds', models.FloatField()),
                        ('estimated_cost', models.FloatField(blank=True, null=True)),
                        ('label', models.CharField(blank=True, max_length=100)),
                        ('model_json', models.TextField(blank=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('trained_model', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='checkpoints', to='training.trainedmodel')),
                    ],
                    options={
                        'db_table': 'diagnosis_trainingcheckpoint',
                        'ordering': ['trained_model_id', 'elapsed_seconds', 'id'],
                    },
                ),
                migrations.CreateModel(
                    name='CandidateMeasurement',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('candidate', models.CharField(max_length=50)),
                        ('position', models.PositiveIntegerField(help_text="Order in the selector's candidate table.")),
                        ('status', models.CharField(choices=[('pending', 'Waiting'), ('running', 'Being measured'), ('done', 'Measured')], default='pending', max_length=10)),
                        ('attempts', models.PositiveIntegerField(default=0)),
                        ('claimed_by', models.CharField(blank=True, max_length=200)),
                        ('heartbeat_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('deadline', models.FloatField(blank=True, help_text='Unix time after which no fold starts (the time budget).', null=True)),
                        ('fingerprint', models.CharField(blank=True, help_text='Hash of the training patients the folds are drawn on.', max_length=64)),
                        ('folds', models.JSONField(blank=True, default=dict)),
                        ('trained_model', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='candidate_measurements', to='training.trainedmodel')),
                    ],
                    options={
                        'db_table': 'diagnosis_candidatemeasurement',
                        'ordering': ['trained_model', 'position'],
                        'constraints': [models.UniqueConstraint(fields=('trained_model', 'candidate'), name='one_measurement_per_candidate')],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
