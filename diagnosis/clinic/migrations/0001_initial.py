"""The clinic's models, taken over from the diagnosis app with their tables (state only: the
tables exist since diagnosis's 0001-0013 and keep their names and rows)."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('diagnosis', '0019_api_tokens_to_the_integration_app'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='DiagnosisCase',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('patient_reference', models.CharField(blank=True, max_length=200)),
                        ('status', models.CharField(choices=[('open', 'Open'), ('classified', 'Classified'), ('referred', 'Referred')], default='open', max_length=12)),
                        ('final_label', models.IntegerField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('closed_at', models.DateTimeField(blank=True, null=True)),
                        ('matrix_snapshot', models.JSONField(blank=True, help_text="Error matrix in force when the case started; empty = the model's own.", null=True)),
                        ('clinician', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='diagnosis_cases', to=settings.AUTH_USER_MODEL)),
                        ('trained_model', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='cases', to='diagnosis.trainedmodel')),
                    ],
                    options={
                        'db_table': 'diagnosis_diagnosiscase',
                        'ordering': ['-updated_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='Team',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=100, unique=True)),
                        ('leads', models.ManyToManyField(blank=True, help_text="Leads (also in the lead-clinicians group) who read the members' cases.", related_name='led_teams', to=settings.AUTH_USER_MODEL)),
                        ('members', models.ManyToManyField(blank=True, help_text="Clinicians whose cases the team's leads may read.", related_name='teams', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'diagnosis_team',
                        'ordering': ['name'],
                    },
                ),
                migrations.CreateModel(
                    name='ConfirmedDiagnosis',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('label', models.IntegerField(help_text="Class code in the model's vocabulary snapshot.")),
                        ('label_name', models.CharField(max_length=200)),
                        ('recorded_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('source', models.CharField(choices=[('case', 'case screen'), ('api', 'API'), ('csv', 'CSV upload')], max_length=8)),
                        ('recorded_by', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='confirmed_diagnoses', to=settings.AUTH_USER_MODEL)),
                        ('case', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='confirmations', to='clinic.diagnosiscase')),
                    ],
                    options={
                        'verbose_name_plural': 'confirmed diagnoses',
                        'db_table': 'diagnosis_confirmeddiagnosis',
                        'ordering': ['case_id', '-recorded_at', '-id'],
                        'indexes': [models.Index(fields=['case', 'recorded_at'], name='confirmed_case_at')],
                    },
                ),
                migrations.CreateModel(
                    name='CaseAccess',
                    fields=[
                        ('id', models.BigAutoField(primary_key=True, serialize=False)),
                        ('at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('username', models.CharField(max_length=150)),
                        ('action', models.CharField(choices=[('view', 'read the case page'), ('summary', 'read the summary'), ('tree', "read the patient's path on the tree"), ('api-read', 'read through an API'), ('step', 'took a step'), ('results', 'recorded several results'), ('correct', 'corrected a value'), ('undo', 'undid a step'), ('confirm', 'recorded a confirmed diagnosis')], max_length=12)),
                        ('detail', models.CharField(blank=True, help_text="e.g. the step's action.", max_length=40)),
                        ('user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='case_accesses', to=settings.AUTH_USER_MODEL)),
                        ('case', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING, related_name='accesses', to='clinic.diagnosiscase')),
                    ],
                    options={
                        'verbose_name': 'case access',
                        'verbose_name_plural': 'case access log',
                        'db_table': 'diagnosis_caseaccess',
                        'ordering': ['-at', '-id'],
                        'indexes': [models.Index(fields=['case', 'at'], name='caseaccess_case_at'), models.Index(fields=['user', 'at'], name='caseaccess_user_at')],
                    },
                ),
                migrations.CreateModel(
                    name='DiagnosisStep',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('position', models.PositiveIntegerField()),
                        ('kind', models.CharField(choices=[('result', 'Test result'), ('unavailable', 'Test unavailable'), ('classify', 'Classified'), ('refer', 'Referred')], max_length=12)),
                        ('value', models.FloatField(blank=True, null=True)),
                        ('price', models.FloatField(default=0.0)),
                        ('advice', models.JSONField(blank=True, null=True)),
                        ('followed_advice', models.BooleanField(default=False)),
                        ('label', models.IntegerField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('overrule_reason', models.TextField(blank=True, default='')),
                        ('implausible_confirmed', models.BooleanField(default=False)),
                        ('plausible_range', models.JSONField(blank=True, null=True)),
                        ('correction', models.CharField(blank=True, choices=[('corrected', 'Value corrected'), ('undone', 'Undone'), ('restored', 'Correction undone')], default='', max_length=12)),
                        ('corrected_at', models.DateTimeField(blank=True, null=True)),
                        ('correction_reason', models.TextField(blank=True, default='')),
                        ('case', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='steps', to='clinic.diagnosiscase')),
                        ('corrected_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='corrected_diagnosis_steps', to=settings.AUTH_USER_MODEL)),
                        ('created_by', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='diagnosis_steps', to=settings.AUTH_USER_MODEL)),
                        ('superseded_by', models.OneToOneField(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='supersedes', to='clinic.diagnosisstep')),
                        ('test', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='steps', to='diagnosis.diagnostictest')),
                    ],
                    options={
                        'db_table': 'diagnosis_diagnosisstep',
                        'ordering': ['case_id', 'position'],
                        'constraints': [models.UniqueConstraint(fields=('case', 'position'), name='unique_step_position'), models.CheckConstraint(condition=models.Q(models.Q(('corrected_at__isnull', True), ('correction', ''), ('superseded_by__isnull', True)), models.Q(('corrected_at__isnull', False), ('correction', 'undone'), ('superseded_by__isnull', True)), models.Q(('corrected_at__isnull', False), ('correction__in', ['corrected', 'restored']), ('superseded_by__isnull', False)), _connector='OR'), name='step_correction_marked')],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
