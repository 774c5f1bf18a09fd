"""The typed cost snapshot: every stored snapshot reads and writes back unchanged, a malformed
one is refused naming its field, and the models read theirs through it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from diagnosis.catalog.selectors.costs import cost_snapshot
from diagnosis.shared.costs import CostSnapshot, FormulaSpec
from diagnosis.training.models import TrainedModel
from learners import CostModel, ModelDocumentError

ROOT = Path(__file__).resolve().parents[3]
#: Every snapshot kept in the repository: the demo models' and the browser tests' models'.
FIXTURES = sorted((ROOT / "fixtures" / "demo_models").glob("*.json")) + sorted(
    (ROOT / "tests" / "browser" / "models").glob("*.json")
)


def _stored(path: Path) -> dict:
    document = json.loads(path.read_text(encoding="utf-8"))
    return document.get("trained_on", document)["cost_snapshot"]


def test_there_are_fixtures_to_read():
    """The round trip below reads the demo models' fixtures and the browser tests' models."""
    assert len(FIXTURES) >= 5, FIXTURES


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixtures_snapshot_reads_and_writes_back_byte_for_byte(path):
    """from_json then to_json gives the very JSON text stored (keys, their order, numbers)."""
    stored = _stored(path)
    snapshot = CostSnapshot.from_json(stored)
    assert json.dumps(snapshot.to_json()) == json.dumps(stored)
    assert snapshot.names == tuple(stored["names"])
    assert snapshot.prices == CostModel.from_dict(stored)
    assert snapshot.vocabulary is not None
    assert snapshot.vocabulary.class_labels == stored["vocabulary"]["class_labels"]


def test_a_snapshot_written_today_reads_back_the_same(toy_dataset):
    """The snapshot training stores (cost_snapshot(dataset).to_json()) survives the round trip."""
    written = cost_snapshot(toy_dataset).to_json()
    assert list(written) == [
        "costs",
        "discounted",
        "groups",
        "delayed",
        "derived",
        "free",
        "names",
        "vocabulary",
        "generated",
        "formulas",
    ]
    assert json.dumps(CostSnapshot.from_json(written).to_json()) == json.dumps(written)


@pytest.mark.parametrize(
    "missing",
    [("vocabulary",), ("generated",), ("formulas",), ("vocabulary", "generated", "formulas")],
)
def test_a_snapshot_from_before_a_key_existed_reads_and_writes_back_without_it(missing):
    """Snapshots written before words, generated marks or formulas were kept still load; the
    absent key reads as None and is not invented on the way back."""
    stored = {k: v for k, v in _stored(FIXTURES[0]).items() if k not in missing}
    snapshot = CostSnapshot.from_json(stored)
    for key in missing:
        assert getattr(snapshot, key) is None
    assert json.dumps(snapshot.to_json()) == json.dumps(stored)
    if "formulas" in missing:
        assert snapshot.derived_formulas() == {}  # a derived value is then typed in


def _broken(**changes) -> dict:
    stored = dict(_stored(FIXTURES[0]))
    for key, value in changes.items():
        if value is ...:
            del stored[key]
        else:
            stored[key] = value
    return stored


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "cost snapshot: expected an object, got a list"),
        ({}, "cost snapshot: missing field 'costs'"),
        (_broken(names=...), "cost snapshot: missing field 'names'"),
        (_broken(names="age"), "cost snapshot.names: expected a list of test names"),
        (_broken(names=[1, 2]), "cost snapshot.names: expected a list of test names"),
        (_broken(units=["mg"]), "cost snapshot: unknown field(s) 'units'"),
        (_broken(costs="cheap"), "cost snapshot.costs: expected a list, got a string"),
        (_broken(free=...), "cost snapshot: missing field 'free'"),
        (_broken(delayed=[1]), "cost snapshot.delayed: has 1 entries"),
        (_broken(generated=[-1]), "cost snapshot.generated: expected test indices"),
        (_broken(generated=[True]), "cost snapshot.generated: expected test indices"),
        (_broken(formulas=[]), "cost snapshot.formulas: expected an object, got a list"),
        (
            _broken(formulas={"FTI": {"tolerance": 0.05}}),
            "cost snapshot.formulas['FTI']: missing field 'formula'",
        ),
        (
            _broken(formulas={"FTI": {"formula": "TT4 / T4U", "tolerance": "5%"}}),
            "cost snapshot.formulas['FTI'].tolerance: expected a number",
        ),
        (_broken(vocabulary=[]), "cost snapshot.vocabulary: expected an object, got a list"),
        (
            _broken(vocabulary={"class_labels": [0, 1], "choices": {}}),
            "cost snapshot.vocabulary.class_labels: expected a list of class names",
        ),
        (
            _broken(vocabulary={"class_labels": ["a"], "choices": {"sex": [{"code": 0}]}}),
            "cost snapshot.vocabulary.choices['sex'][0]: missing field 'label'",
        ),
    ],
)
def test_a_malformed_snapshot_is_refused_naming_its_field(document, message):
    """Like a model document, a snapshot is checked field by field before anything uses it."""
    with pytest.raises(ModelDocumentError) as caught:
        CostSnapshot.from_json(document)
    assert str(caught.value).startswith(message), str(caught.value)


def test_a_stored_formula_that_no_longer_parses_is_named_when_used():
    """A formula is parsed against its test's inputs when the case needs it, as before."""
    stored = {
        **CostModel([1.0, 2.0, 0.0], derived={2: (0, 1)}).to_dict(),
        "names": ["TT4", "T4U", "FTI"],
        "formulas": {"FTI": {"formula": "TT4 / TSH", "tolerance": 0.05}},
    }
    snapshot = CostSnapshot.from_json(stored)
    assert snapshot.formulas == {"FTI": FormulaSpec(text="TT4 / TSH", tolerance=0.05)}
    assert snapshot.derived_from(2) == ["TT4", "T4U"]
    with pytest.raises(ValidationError, match="The stored formula of FTI is invalid"):
        snapshot.derived_formulas()


def test_a_trained_model_reads_its_column_through_the_snapshot(trained_model):
    """TrainedModel.snapshot is the stored column, typed; the column keeps the JSON shape."""
    trained_model.refresh_from_db()
    snapshot = trained_model.snapshot
    assert snapshot.to_json() == trained_model.cost_snapshot
    assert snapshot.names == ("glucose", "insulin", "sex")
    assert snapshot == cost_snapshot(trained_model.dataset)
    TrainedModel.objects.filter(pk=trained_model.pk).update(cost_snapshot={})
    trained_model.refresh_from_db()
    with pytest.raises(ModelDocumentError, match="missing field 'costs'"):
        trained_model.snapshot  # noqa: B018 - the property reads and checks the column


def test_the_snapshot_is_read_once_per_value_of_the_column(trained_model):
    """A step asks for the snapshot several times: it is read once, and read again when the
    column gets a new value (assigned, or read back from the database)."""
    first = trained_model.snapshot
    assert trained_model.snapshot is first
    changed = dict(trained_model.cost_snapshot, names=["a", "b", "c"])
    trained_model.cost_snapshot = changed
    assert trained_model.snapshot.names == ("a", "b", "c")
    TrainedModel.objects.filter(pk=trained_model.pk).update(cost_snapshot=changed)
    trained_model.refresh_from_db()
    assert trained_model.snapshot.names == ("a", "b", "c")
    assert trained_model.snapshot is not first
