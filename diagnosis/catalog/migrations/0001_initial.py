"""The catalog's models and their change history, taken over from the diagnosis app with their
tables (state only: the tables exist since diagnosis's 0001-0015 and keep their names and rows,
the historical ones too)."""

import django.db.models.deletion
import simple_history.models
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('diagnosis', '0021_trained_models_to_the_training_app'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Dataset',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=200, unique=True)),
                        ('description', models.TextField(blank=True)),
                        ('class_labels', models.JSONField(default=list, help_text='Class names; the position in the list is the class code.')),
                        ('source', models.CharField(blank=True, max_length=500)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('price_generation', models.JSONField(blank=True, default=dict, help_text='How the automatic price generator (paper 000 §4.1) last priced the tests: its parameters, seed, when and by whom. Empty = never.')),
                    ],
                    options={
                        'db_table': 'diagnosis_dataset',
                        'ordering': ['name'],
                    },
                ),
                migrations.CreateModel(
                    name='DatasetCase',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('values', models.JSONField(help_text='One value per test in index order; null = missing.')),
                        ('label', models.PositiveIntegerField(help_text="Index into the dataset's class labels.")),
                        ('dataset', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='cases', to='catalog.dataset')),
                    ],
                    options={
                        'db_table': 'diagnosis_datasetcase',
                        'ordering': ['id'],
                    },
                ),
                migrations.CreateModel(
                    name='HistoricalDataset',
                    fields=[
                        ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                        ('name', models.CharField(db_index=True, max_length=200)),
                        ('description', models.TextField(blank=True)),
                        ('class_labels', models.JSONField(default=list, help_text='Class names; the position in the list is the class code.')),
                        ('source', models.CharField(blank=True, max_length=500)),
                        ('created_at', models.DateTimeField(blank=True, editable=False)),
                        ('price_generation', models.JSONField(blank=True, default=dict, help_text='How the automatic price generator (paper 000 §4.1) last priced the tests: its parameters, seed, when and by whom. Empty = never.')),
                        ('history_id', models.AutoField(primary_key=True, serialize=False)),
                        ('history_date', models.DateTimeField(db_index=True)),
                        ('history_change_reason', models.CharField(max_length=100, null=True)),
                        ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                        ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'verbose_name': 'historical dataset',
                        'verbose_name_plural': 'historical datasets',
                        'db_table': 'diagnosis_historicaldataset',
                        'ordering': ('-history_date', '-history_id'),
                        'get_latest_by': ('history_date', 'history_id'),
                    },
                    bases=(simple_history.models.HistoricalChanges, models.Model),
                ),
                migrations.CreateModel(
                    name='HistoricalErrorMatrix',
                    fields=[
                        ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                        ('name', models.CharField(max_length=100)),
                        ('matrix', models.JSONField(help_text='K x K list of lists, matrix[actual][predicted].')),
                        ('reject_cost', models.FloatField(blank=True, help_text='Cost of referring a patient; empty = never refer.', null=True)),
                        ('history_id', models.AutoField(primary_key=True, serialize=False)),
                        ('history_date', models.DateTimeField(db_index=True)),
                        ('history_change_reason', models.CharField(max_length=100, null=True)),
                        ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                        ('dataset', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='catalog.dataset')),
                        ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'verbose_name': 'historical error matrix',
                        'verbose_name_plural': 'historical error matrixs',
                        'db_table': 'diagnosis_historicalerrormatrix',
                        'ordering': ('-history_date', '-history_id'),
                        'get_latest_by': ('history_date', 'history_id'),
                    },
                    bases=(simple_history.models.HistoricalChanges, models.Model),
                ),
                migrations.CreateModel(
                    name='HistoricalTestGroup',
                    fields=[
                        ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                        ('name', models.CharField(max_length=100)),
                        ('history_id', models.AutoField(primary_key=True, serialize=False)),
                        ('history_date', models.DateTimeField(db_index=True)),
                        ('history_change_reason', models.CharField(max_length=100, null=True)),
                        ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                        ('dataset', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='catalog.dataset')),
                        ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'verbose_name': 'historical test group',
                        'verbose_name_plural': 'historical test groups',
                        'db_table': 'diagnosis_historicaltestgroup',
                        'ordering': ('-history_date', '-history_id'),
                        'get_latest_by': ('history_date', 'history_id'),
                    },
                    bases=(simple_history.models.HistoricalChanges, models.Model),
                ),
                migrations.CreateModel(
                    name='TestGroup',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=100)),
                        ('dataset', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='groups', to='catalog.dataset')),
                    ],
                    options={
                        'db_table': 'diagnosis_testgroup',
                        'ordering': ['name'],
                    },
                ),
                migrations.CreateModel(
                    name='HistoricalDiagnosticTest',
                    fields=[
                        ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                        ('index', models.PositiveIntegerField(help_text="Column position in the dataset's cases.")),
                        ('name', models.CharField(help_text='Machine name, unique in the dataset.', max_length=100)),
                        ('label', models.CharField(blank=True, help_text='Name shown to clinicians.', max_length=200)),
                        ('unit', models.CharField(blank=True, max_length=50)),
                        ('kind', models.CharField(choices=[('numeric', 'Numeric'), ('nominal', 'Nominal (coded categories)')], default='numeric', max_length=10)),
                        ('min_value', models.FloatField(blank=True, null=True)),
                        ('max_value', models.FloatField(blank=True, null=True)),
                        ('plausible_min', models.FloatField(blank=True, help_text='Lowest value expected; a lower one (still in range) must be confirmed.', null=True, verbose_name='plausible from')),
                        ('plausible_max', models.FloatField(blank=True, help_text='Highest value expected; a higher one (still in range) must be confirmed.', null=True, verbose_name='plausible to')),
                        ('integer_only', models.BooleanField(default=False, help_text='A count (vessels, pregnancies): a value such as 1.5 is refused.', verbose_name='whole numbers only')),
                        ('choices', models.JSONField(blank=True, default=list, help_text='Nominal only: [{"code": 0, "label": "..."}, ...]')),
                        ('price', models.FloatField(default=1.0)),
                        ('discounted_price', models.FloatField(default=1.0, help_text='Charged when another test of the same group is already done.')),
                        ('delayed', models.BooleanField(default=False, help_text='The result arrives later (lab).')),
                        ('price_generated', models.BooleanField(default=False, help_text='The price was made by the automatic price generator, not taken from a fee schedule; editing the price clears this.')),
                        ('derived_from', models.JSONField(blank=True, default=list, help_text='Names of the tests this one is computed from.')),
                        ('formula', models.CharField(blank=True, help_text='Derived tests only: how the value follows from the inputs, with test names, numbers, + - * / and parentheses, e.g. TT4 / T4U. Empty = typed in with its inputs.', max_length=200)),
                        ('formula_tolerance', models.FloatField(default=0.05, help_text="A typed value may differ from the formula's by this fraction at most (0.05 = 5%); beyond it the value is refused as contradicting its inputs.")),
                        ('history_id', models.AutoField(primary_key=True, serialize=False)),
                        ('history_date', models.DateTimeField(db_index=True)),
                        ('history_change_reason', models.CharField(max_length=100, null=True)),
                        ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                        ('dataset', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='catalog.dataset')),
                        ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('group', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='catalog.testgroup')),
                    ],
                    options={
                        'verbose_name': 'historical diagnostic test',
                        'verbose_name_plural': 'historical diagnostic tests',
                        'db_table': 'diagnosis_historicaldiagnostictest',
                        'ordering': ('-history_date', '-history_id'),
                        'get_latest_by': ('history_date', 'history_id'),
                    },
                    bases=(simple_history.models.HistoricalChanges, models.Model),
                ),
                migrations.CreateModel(
                    name='DiagnosticTest',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('index', models.PositiveIntegerField(help_text="Column position in the dataset's cases.")),
                        ('name', models.CharField(help_text='Machine name, unique in the dataset.', max_length=100)),
                        ('label', models.CharField(blank=True, help_text='Name shown to clinicians.', max_length=200)),
                        ('unit', models.CharField(blank=True, max_length=50)),
                        ('kind', models.CharField(choices=[('numeric', 'Numeric'), ('nominal', 'Nominal (coded categories)')], default='numeric', max_length=10)),
                        ('min_value', models.FloatField(blank=True, null=True)),
                        ('max_value', models.FloatField(blank=True, null=True)),
                        ('plausible_min', models.FloatField(blank=True, help_text='Lowest value expected; a lower one (still in range) must be confirmed.', null=True, verbose_name='plausible from')),
                        ('plausible_max', models.FloatField(blank=True, help_text='Highest value expected; a higher one (still in range) must be confirmed.', null=True, verbose_name='plausible to')),
                        ('integer_only', models.BooleanField(default=False, help_text='A count (vessels, pregnancies): a value such as 1.5 is refused.', verbose_name='whole numbers only')),
                        ('choices', models.JSONField(blank=True, default=list, help_text='Nominal only: [{"code": 0, "label": "..."}, ...]')),
                        ('price', models.FloatField(default=1.0)),
                        ('discounted_price', models.FloatField(default=1.0, help_text='Charged when another test of the same group is already done.')),
                        ('delayed', models.BooleanField(default=False, help_text='The result arrives later (lab).')),
                        ('price_generated', models.BooleanField(default=False, help_text='The price was made by the automatic price generator, not taken from a fee schedule; editing the price clears this.')),
                        ('derived_from', models.JSONField(blank=True, default=list, help_text='Names of the tests this one is computed from.')),
                        ('formula', models.CharField(blank=True, help_text='Derived tests only: how the value follows from the inputs, with test names, numbers, + - * / and parentheses, e.g. TT4 / T4U. Empty = typed in with its inputs.', max_length=200)),
                        ('formula_tolerance', models.FloatField(default=0.05, help_text="A typed value may differ from the formula's by this fraction at most (0.05 = 5%); beyond it the value is refused as contradicting its inputs.")),
                        ('dataset', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='tests', to='catalog.dataset')),
                        ('group', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='tests', to='catalog.testgroup')),
                    ],
                    options={
                        'db_table': 'diagnosis_diagnostictest',
                        'ordering': ['dataset_id', 'index'],
                    },
                ),
                migrations.CreateModel(
                    name='ErrorMatrix',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=100)),
                        ('matrix', models.JSONField(help_text='K x K list of lists, matrix[actual][predicted].')),
                        ('reject_cost', models.FloatField(blank=True, help_text='Cost of referring a patient; empty = never refer.', null=True)),
                        ('dataset', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='error_matrices', to='catalog.dataset')),
                    ],
                    options={
                        'db_table': 'diagnosis_errormatrix',
                        'ordering': ['dataset_id', 'name'],
                        'constraints': [models.UniqueConstraint(fields=('dataset', 'name'), name='unique_matrix_name')],
                    },
                ),
                migrations.AddConstraint(
                    model_name='testgroup',
                    constraint=models.UniqueConstraint(fields=('dataset', 'name'), name='unique_group_name_per_dataset'),
                ),
                migrations.AddConstraint(
                    model_name='diagnostictest',
                    constraint=models.UniqueConstraint(fields=('dataset', 'index'), name='unique_test_index'),
                ),
                migrations.AddConstraint(
                    model_name='diagnostictest',
                    constraint=models.UniqueConstraint(fields=('dataset', 'name'), name='unique_test_name'),
                ),
            ],
            database_operations=[],
        ),
    ]
