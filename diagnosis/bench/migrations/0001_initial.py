"""The bench's models, taken over from the diagnosis app with their tables (state only: the
tables exist since diagnosis's 0009 and keep their names and rows)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('diagnosis', '0017_merge_plausible_ranges_selection_cut_short'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Experiment',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=200)),
                        ('learners', models.JSONField(default=list)),
                        ('matrix_kind', models.CharField(choices=[('matrix', 'One error matrix'), ('uniform', 'A sweep of uniform error costs'), ('ratio', 'A sweep of false-positive / false-negative cost ratios')], default='matrix', max_length=10)),
                        ('matrix_spec', models.JSONField(default=dict)),
                        ('matrices', models.JSONField(default=list)),
                        ('k', models.PositiveIntegerField(help_text='Folds of the cross-validation.')),
                        ('repeats', models.PositiveIntegerField(default=1)),
                        ('seed', models.IntegerField(default=0)),
                        ('cost_snapshot', models.JSONField(default=dict)),
                        ('case_ids', models.JSONField(default=list)),
                        ('categorical', models.JSONField(default=list)),
                        ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('done', 'Done'), ('cancelled', 'Cancelled'), ('failed', 'Failed')], default='queued', max_length=10)),
                        ('status_reason', models.TextField(blank=True, help_text='Why it failed, was cancelled, or is not moving.')),
                        ('n_tasks', models.PositiveIntegerField(default=0)),
                        ('n_done', models.PositiveIntegerField(default=0)),
                        ('n_failed', models.PositiveIntegerField(default=0)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('last_activity_at', models.DateTimeField(blank=True, null=True)),
                        ('results', models.JSONField(blank=True, default=dict)),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='experiments', to=settings.AUTH_USER_MODEL)),
                        ('dataset', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='experiments', to='diagnosis.dataset')),
                        ('parent', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='children', to='bench.experiment')),
                    ],
                    options={
                        'db_table': 'diagnosis_experiment',
                        'ordering': ['-created_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='ExperimentTask',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('learner_index', models.PositiveIntegerField()),
                        ('repeat', models.PositiveIntegerField()),
                        ('fold', models.PositiveIntegerField()),
                        ('matrix_index', models.PositiveIntegerField()),
                        ('status', models.CharField(choices=[('pending', 'Pending'), ('running', 'Running'), ('done', 'Done'), ('failed', 'Failed'), ('cancelled', 'Cancelled')], default='pending', max_length=10)),
                        ('attempts', models.PositiveIntegerField(default=0)),
                        ('claimed_by', models.CharField(blank=True, max_length=200)),
                        ('heartbeat_at', models.DateTimeField(blank=True, null=True)),
                        ('enqueued_at', models.DateTimeField(blank=True, null=True)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, null=True)),
                        ('error', models.TextField(blank=True)),
                        ('normalized_cost', models.FloatField(blank=True, null=True)),
                        ('accuracy', models.FloatField(blank=True, null=True)),
                        ('mean_test_cost', models.FloatField(blank=True, null=True)),
                        ('mean_total_cost', models.FloatField(blank=True, null=True)),
                        ('misclassification_cost', models.FloatField(blank=True, null=True)),
                        ('reject_rate', models.FloatField(blank=True, null=True)),
                        ('n_cases', models.PositiveIntegerField(blank=True, null=True)),
                        ('fit_seconds', models.FloatField(blank=True, null=True)),
                        ('test_frequency', models.JSONField(blank=True, default=list)),
                        ('test_paid', models.JSONField(blank=True, default=list)),
                        ('roc', models.JSONField(blank=True, default=dict)),
                        ('anytime', models.JSONField(blank=True, default=list)),
                        ('experiment', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='tasks', to='bench.experiment')),
                        ('lead', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='followers', to='bench.experimenttask')),
                    ],
                    options={
                        'db_table': 'diagnosis_experimenttask',
                        'ordering': ['experiment_id', 'learner_index', 'matrix_index', 'repeat', 'fold'],
                        'indexes': [models.Index(fields=['experiment', 'status'], name='experiment_task_status')],
                        'constraints': [models.UniqueConstraint(fields=('experiment', 'learner_index', 'repeat', 'fold', 'matrix_index'), name='unique_experiment_cell')],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
