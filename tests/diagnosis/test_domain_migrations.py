"""A database filled by the release before the domain apps moves through their migrations, and
every dataset and its history, case, step, confirmation, team, model, experiment and API token
reads the same afterwards."""

from __future__ import annotations

import hashlib

import pytest
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from diagnosis.bench.models import Experiment
from diagnosis.bench.selectors import experiments as experiment_reads
from diagnosis.bench.services import runner as experiment_runner
from diagnosis.bench.services.experiments import create_experiment
from diagnosis.catalog.models import Dataset
from diagnosis.catalog.selectors.catalog_history import catalog_history
from diagnosis.clinic.models import CaseAccess, ConfirmedDiagnosis, DiagnosisCase, Team
from diagnosis.clinic.permissions import can_read_case
from diagnosis.clinic.selectors.cases import compute_case_state
from diagnosis.clinic.services.cases import start_case
from diagnosis.clinic.services.step import Classify, RecordResult, apply_step
from diagnosis.integration.services.api_tokens import authenticate_token
from diagnosis.permissions import LEAD_CLINICIANS
from diagnosis.training.models import TrainingCheckpoint

#: Where the release before the domain apps left the migrations: every model in ``diagnosis``.
PREVIOUS_RELEASE = [
    ("diagnosis", "0017_merge_plausible_ranges_selection_cut_short"),
    ("catalog", None),
    ("training", None),
    ("clinic", None),
    ("bench", None),
    ("integration", None),
]
#: The models that left ``diagnosis`` for a domain app: (model, its app now).
MOVED = {
    "dataset": "catalog",
    "datasetcase": "catalog",
    "testgroup": "catalog",
    "diagnostictest": "catalog",
    "errormatrix": "catalog",
    "historicaldataset": "catalog",
    "historicaltestgroup": "catalog",
    "historicaldiagnostictest": "catalog",
    "historicalerrormatrix": "catalog",
    "trainedmodel": "training",
    "trainingcheckpoint": "training",
    "modeldecision": "training",
    "candidatemeasurement": "training",
    "diagnosiscase": "clinic",
    "diagnosisstep": "clinic",
    "confirmeddiagnosis": "clinic",
    "caseaccess": "clinic",
    "team": "clinic",
    "experiment": "bench",
    "experimenttask": "bench",
    "apitoken": "integration",
}


def _migrate(targets) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()  # what the last migrate left applied
    executor.migrate(targets)


def _latest() -> list[tuple[str, str]]:
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


def _rows() -> dict[str, list[tuple]]:
    """Every row of every table of ours, in primary-key order."""
    with connection.cursor() as cursor:
        tables = [
            t for t in connection.introspection.table_names(cursor) if t.startswith("diagnosis_")
        ]
        dump = {}
        for table in tables:
            cursor.execute(f'SELECT * FROM "{table}" ORDER BY 1')
            dump[table] = cursor.fetchall()
    return dump


def _case_reads() -> dict[int, tuple]:
    reads = {}
    for case in DiagnosisCase.objects.select_related("trained_model__dataset").order_by("pk"):
        state = compute_case_state(case)
        reads[case.pk] = (
            [(s.pk, s.position, s.kind, s.value, s.price, s.followed_advice) for s in state.steps],
            state.accumulated_cost,
            state.advice,
            [(o.test.name, o.price_now, o.recommended) for o in state.test_options],
            case.status,
            case.final_label,
        )
    return reads


def _experiment_reads(user) -> dict[int, tuple]:
    reads = {}
    for summary in experiment_reads.list_experiments(user=user):
        pk = summary.id
        reads[pk] = (
            summary,
            experiment_reads.results_table(user=user, experiment_id=pk),
            experiment_reads.export_csv(user=user, experiment_id=pk),
        )
    return reads


def _permissions() -> list[tuple]:
    return sorted(
        Permission.objects.filter(content_type__model__in=MOVED).values_list(
            "pk", "codename", "content_type_id", "content_type__model"
        )
    )


@pytest.mark.django_db(transaction=True)
def test_a_populated_database_reads_the_same_after_the_domain_apps_migrations(
    clinician, other_clinician, model_admin, trained_model, toy_dataset
):
    """Cases with steps, a model, a finished experiment and an API token, written at the
    previous release's migrations (an experiment, a team, a confirmed diagnosis and the token
    through that release's own models), read the same after the moves: every row of every
    table, each case's state, each experiment's results and export, the moved models' content
    types and permissions (same rows, new app), the old team's lead still reads its member's
    case, and the old token still signs its user in."""
    latest = _latest()
    _migrate(PREVIOUS_RELEASE)
    try:
        # the previous release's own model of an experiment (its app still "diagnosis")
        old_apps = (
            MigrationExecutor(connection)
            .loader.project_state([node for node in PREVIOUS_RELEASE if node[1] is not None])
            .apps
        )
        old_experiment = old_apps.get_model("diagnosis", "Experiment")
        old_experiment.objects.create(
            dataset_id=toy_dataset.pk, name="written by the old model", k=3, status="queued"
        )
        assert ContentType.objects.get(model="experiment").app_label == "diagnosis"
        # a token the previous release issued: only the SHA-256 of the secret is stored
        old_secret = "cad_written-by-the-old-model"
        old_apps.get_model("diagnosis", "ApiToken").objects.create(
            user_id=clinician.pk,
            name="ward EHR",
            key_hash=hashlib.sha256(old_secret.encode()).hexdigest(),
            prefix=old_secret[:12],
            created_by_id=model_admin.pk,
        )
        assert ContentType.objects.get(model="apitoken").app_label == "diagnosis"
        experiment = create_experiment(
            user=model_admin,
            dataset=toy_dataset,
            learners=[{"key": "eg2", "params": {}}],
            matrix_kind="uniform",
            costs=[10, 100],
            k=2,
            repeats=1,
            seed=3,
            launch=False,
        )
        for pk in experiment.tasks.filter(lead__isnull=True).values_list("pk", flat=True):
            experiment_runner.run_task(task_id=pk, worker="migration-test")
        assert Experiment.objects.get(pk=experiment.pk).status == Experiment.DONE
        open_case = start_case(user=clinician, trained_model=trained_model, patient_reference="A")
        apply_step(
            user=clinician,
            case_id=open_case.pk,
            command=RecordResult(test="glucose", value=150),
        )
        closed = start_case(user=clinician, trained_model=trained_model, patient_reference="B")
        apply_step(
            user=clinician, case_id=closed.pk, command=RecordResult(test="insulin", value=31)
        )
        apply_step(user=clinician, case_id=closed.pk, command=Classify(label=1))
        # a team and a confirmed diagnosis the previous release wrote (its app "diagnosis")
        assert ContentType.objects.get(model="diagnosiscase").app_label == "diagnosis"
        assert ContentType.objects.get(model="trainedmodel").app_label == "diagnosis"
        assert ContentType.objects.get(model="historicaldataset").app_label == "diagnosis"
        # a catalog edit: its history row is written to the historical table of the time
        toy_dataset.description = "edited before the move"
        toy_dataset.save()
        # the previous release's own model of a trained model reads the one trained since
        old_trained = old_apps.get_model("diagnosis", "TrainedModel").objects.get(
            pk=trained_model.pk
        )
        old_apps.get_model("diagnosis", "TrainingCheckpoint").objects.create(
            trained_model_id=old_trained.pk, elapsed_seconds=1.5, label="written by the old model"
        )
        lead = other_clinician
        lead.groups.add(Group.objects.get_or_create(name=LEAD_CLINICIANS)[0])
        old_team = old_apps.get_model("diagnosis", "Team").objects.create(name="ward 7")
        old_team.members.add(clinician.pk)
        old_team.leads.add(lead.pk)
        old_apps.get_model("diagnosis", "ConfirmedDiagnosis").objects.create(
            case_id=closed.pk,
            label=1,
            label_name="written by the old model",
            source="case",
            recorded_by_id=clinician.pk,
        )
        permissions = _permissions()
        content_types = dict(ContentType.objects.filter(model__in=MOVED).values_list("model", "pk"))
        before = (
            _rows(),
            _case_reads(),
            _experiment_reads(model_admin),
            catalog_history(user=model_admin, dataset=toy_dataset),
        )
    finally:
        _migrate(latest)
    after = (
        _rows(),
        _case_reads(),
        _experiment_reads(model_admin),
        catalog_history(user=model_admin, dataset=toy_dataset),
    )
    assert after[0] == before[0]  # not a row changed, added or lost
    assert after[1] == before[1] and len(after[1]) == 2
    assert after[2] == before[2] and len(after[2]) == 2
    assert after[3] == before[3] and after[3]  # the catalog's history, edit included
    assert Dataset.history.filter(description="edited before the move").count() == 1
    assert dict(ContentType.objects.filter(model__in=MOVED).values_list("model", "pk")) == (
        content_types
    )
    for model, app in MOVED.items():
        assert ContentType.objects.get(model=model).app_label == app
    assert _permissions() == permissions
    assert Experiment.objects.filter(name="written by the old model").count() == 1
    team = Team.objects.get(name="ward 7")
    assert list(team.members.all()) == [clinician] and list(team.leads.all()) == [lead]
    assert can_read_case(lead, DiagnosisCase.objects.get(pk=closed.pk))
    assert ConfirmedDiagnosis.objects.get(case_id=closed.pk).label_name == (
        "written by the old model"
    )
    assert CaseAccess.objects.filter(case_id=closed.pk).exists()
    assert TrainingCheckpoint.objects.get(label="written by the old model").trained_model == (
        trained_model
    )
    assert DiagnosisCase.objects.get(pk=closed.pk).trained_model == trained_model
    assert authenticate_token(presented=old_secret) == clinician
