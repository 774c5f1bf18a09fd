"""Dataset imports: CSV (detection, errors naming row and column, all-or-nothing), UCI folders."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError

from diagnosis.catalog.models import Dataset, DatasetCase, DiagnosticTest, ErrorMatrix, TestGroup
from diagnosis.catalog.services.datasets import create_dataset, import_csv, import_uci_folder

GOOD_CSV = """age,sex,chol,outcome
63,M,233,sick
41,F,?,healthy
57,F,354,sick
"""


def _csv(text: str) -> io.BytesIO:
    data = io.BytesIO(text.encode())
    data.name = "upload.csv"
    return data


def _nothing_saved() -> bool:
    return not (
        Dataset.objects.exists()
        or DatasetCase.objects.exists()
        or DiagnosticTest.objects.exists()
        or TestGroup.objects.exists()
        or ErrorMatrix.objects.exists()
    )


def test_csv_import_detects_numeric_and_nominal_columns(model_admin):
    """Numbers become numeric tests, text becomes coded choices, '?' is missing."""
    dataset = import_csv(
        user=model_admin, name="Small", file=_csv(GOOD_CSV), class_column="outcome"
    )
    tests = {t.name: t for t in dataset.tests.all()}
    assert [t.name for t in dataset.tests.order_by("index")] == ["age", "sex", "chol"]
    assert tests["age"].kind == "numeric" and tests["chol"].kind == "numeric"
    assert tests["sex"].kind == "nominal"
    assert tests["sex"].choices == [{"code": 0, "label": "F"}, {"code": 1, "label": "M"}]
    assert dataset.class_labels == ["healthy", "sick"]
    rows = list(dataset.cases.order_by("id").values_list("values", "label"))
    assert rows == [([63.0, 1.0, 233.0], 1), ([41.0, 0.0, None], 0), ([57.0, 0.0, 354.0], 1)]
    assert dataset.error_matrices.get().matrix == [[0.0, 1.0], [1.0, 0.0]]


def test_csv_categorical_columns_are_forced_nominal(model_admin):
    """A numeric-looking column listed as categorical gets codes in numeric order."""
    dataset = import_csv(
        user=model_admin,
        name="Small",
        file=_csv(GOOD_CSV),
        class_column="outcome",
        categorical=["age"],
    )
    age = dataset.tests.get(name="age")
    assert age.kind == "nominal" and [c["label"] for c in age.choices] == ["41", "57", "63"]


@pytest.mark.parametrize(
    ("text", "kwargs", "message"),
    [
        ("a,b,y\n1,2,x\n3,4\n", {}, r"Row 2 \(line 3\) has 2 fields; the header has 3"),
        (
            "a,b,y\n1,2,x\n3,oops,z\n5,6,x\n",
            {},
            r"Row 2 \(line 3\), column 'b': 'oops' is not a number",
        ),
        ("a,b,y\n1,2,x\n3,4,?\n", {}, r"Row 2 \(line 3\), column 'y': the class is missing"),
        ("a,b,y\n1,2,x\n", {"class_column": "z"}, "class column 'z' is not in the header"),
        ("a,b,y\n1,2,x\n3,4,x\n", {}, "only one class"),
        ("a,a,y\n1,2,x\n", {}, "Header names repeat: a"),
        ("a,b,y\n", {}, "no data rows"),
        ("", {}, "empty"),
        ("a,b,y\n1,2,x\n3,4,z\n", {"categorical": ["q"]}, "not in the header: q"),
    ],
)
def test_csv_errors_name_row_and_column_and_save_nothing(model_admin, text, kwargs, message):
    """Each malformed upload raises a ValidationError saying where, and leaves the DB untouched."""
    options = {"class_column": "y", **kwargs}
    with pytest.raises(ValidationError, match=message):
        import_csv(user=model_admin, name="Bad", file=_csv(text), **options)
    assert _nothing_saved()


def test_late_error_rolls_back_everything(model_admin):
    """An error found after tests were created (bad class code in a row) leaves nothing behind."""
    with pytest.raises(ValidationError, match="Row 2: class code 5"):
        create_dataset(
            name="Half",
            class_labels=["a", "b"],
            tests=[{"name": "x", "group": "G"}, {"name": "y", "group": "G"}],
            rows=[[1.0, 2.0], [3.0, 4.0]],
            labels=[0, 5],
        )
    assert _nothing_saved()


def test_create_dataset_rejects_bad_prices_and_duplicate_names(db):
    """Discounted above full price and repeated test names are refused with clear messages."""
    with pytest.raises(
        ValidationError, match=r"Discounted price of x \(5\) is above its full price \(2\)"
    ):
        create_dataset(
            name="P",
            class_labels=["a", "b"],
            tests=[{"name": "x", "price": 2, "discounted_price": 5}],
            rows=[[1.0]],
            labels=[0],
        )
    with pytest.raises(ValidationError, match="Two tests are named 'x'"):
        create_dataset(
            name="P",
            class_labels=["a", "b"],
            tests=[{"name": "x"}, {"name": "x"}],
            rows=[[1.0, 2.0]],
            labels=[0],
        )
    assert _nothing_saved()


def test_only_model_admins_may_import(clinician):
    """A clinician cannot import datasets."""
    with pytest.raises(PermissionDenied):
        import_csv(user=clinician, name="X", file=_csv(GOOD_CSV), class_column="outcome")


UCI = Path(settings.SHARED_DIR) / "data" / "uci"


def test_uci_heart_folder_brings_turney_prices(model_admin):
    """The heart folder imports 303 cases with Turney's groups and discounted prices."""
    dataset = import_uci_folder(user=model_admin, name="Heart", path=UCI / "heart-disease")
    assert dataset.cases.count() == 303 and dataset.tests.count() == 13
    chol = dataset.tests.get(name="chol")
    assert (chol.price, chol.discounted_price, chol.group.name, chol.delayed) == (
        7.27,
        5.17,
        "A",
        True,
    )
    thalach = dataset.tests.get(name="thalach")
    assert (thalach.price, thalach.discounted_price, thalach.group.name) == (102.9, 1.0, "B")


def test_uci_thyroid_data_file_has_derived_fti(model_admin):
    """A .data file in a multi-file folder is accepted; FTI is derived from TT4 and T4U."""
    dataset = import_uci_folder(
        user=model_admin, name="Thyroid", path=UCI / "thyroid-disease" / "ann-train.data"
    )
    fti = dataset.tests.get(name="FTI")
    assert fti.derived_from == ["TT4", "T4U"]
    assert fti.formula == "TT4 / (10 * T4U)"  # ann-thyroid's scaling of FTI = TT4 / T4U
    from diagnosis.catalog.selectors.costs import cost_model_for

    model = cost_model_for(dataset)
    tt4, t4u = dataset.tests.get(name="TT4").index, dataset.tests.get(name="T4U").index
    assert model.marginal_cost(fti.index, ()) == pytest.approx(14.51 + 9.31)
    assert model.marginal_cost(fti.index, {tt4, t4u}) == 0.0


def test_uci_missing_folder_is_a_validation_error(model_admin, tmp_path):
    """A path that is not a folder gives a clear error and saves nothing."""
    with pytest.raises(ValidationError, match="is not a folder"):
        import_uci_folder(user=model_admin, name="None", path=tmp_path / "nowhere")
    assert _nothing_saved()
