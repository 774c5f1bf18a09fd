"""Codes on the catalog: the demo datasets' LOINC / local test codes and class codes, as
shipped in fixtures/fhir/demo_codes.json and loaded by load_demo_data; edited in the admin."""

from __future__ import annotations

import json
import os

import pytest
from django.core.management import call_command
from django.test import Client

from diagnosis.integration.models import ICD_10, LOCAL_TESTS, LOINC, ClassCode, TestCode
from diagnosis.integration.services.codes import DEMO_CODES, load_demo_codes
from diagnosis.management.demo_data import FIXTURE_FILES, FIXTURES_DIR, HEART

#: The LOINC codes the fixture may use: each checked by hand against what the test measures.
VETTED_LOINC = {
    "30525-0": "Age",
    "46098-0": "Sex",
    "2093-3": "Cholesterol [Mass/volume] in Serum or Plasma",
    "2345-7": "Glucose [Mass/volume] in Serum or Plasma",
    "8462-4": "Diastolic blood pressure",
    "39156-5": "Body mass index (BMI) [Ratio]",
    "3016-3": "Thyrotropin [Units/volume] in Serum or Plasma",
}


def _document() -> dict:
    return json.loads(DEMO_CODES.read_text(encoding="utf-8"))


def test_every_demo_test_and_class_has_a_code_and_no_loinc_code_is_made_up():
    """Each demo dataset's every test and class is mapped; a LOINC code is one of the vetted
    ones with its display; a local code says why in its note."""
    datasets = _document()["datasets"]
    assert set(datasets) == set(FIXTURE_FILES)
    for name, codes in datasets.items():
        catalog = json.loads((FIXTURES_DIR / FIXTURE_FILES[name]).read_text(encoding="utf-8"))
        assert set(codes["tests"]) == {t["name"] for t in catalog["tests"]}, name
        assert len(codes["classes"]) == len(catalog["class_labels"]), name
        for test, entry in codes["tests"].items():
            if entry["system"] == "loinc":
                assert VETTED_LOINC[entry["code"]] == entry["display"], (name, test)
            else:
                assert entry["system"] == "local" and "code" not in entry, (name, test)
                assert len(entry["note"]) > 20, (name, test)
        for entry in codes["classes"]:
            assert entry["system"] in ("local", "icd10", "snomed")
            assert entry["code"] and entry["display"]
            if entry["system"] == "local":
                assert entry["note"]


@pytest.mark.django_db
def test_load_demo_data_gives_the_demo_dataset_its_codes_and_keeps_an_admins_edit():
    """load_demo_data maps heart's tests and classes; loading again adds nothing and leaves an
    admin's edit as it is."""
    call_command("load_demo_data", "--no-train", "--only", HEART, stdout=open(os.devnull, "w"))
    chol = TestCode.objects.get(test__dataset__name=HEART, test__name="chol")
    assert (chol.system, chol.code, chol.unit) == (LOINC, "2093-3", "mg/dL")
    cp = TestCode.objects.get(test__dataset__name=HEART, test__name="cp")
    assert (cp.system, cp.code) == (LOCAL_TESTS, "cp") and "no standard LOINC" in cp.note
    assert TestCode.objects.filter(test__dataset__name=HEART).count() == 13
    disease = ClassCode.objects.get(dataset__name=HEART, label_index=1)
    assert (disease.system, disease.code) == (ICD_10, "I25.1")
    cp.code, cp.note = "edited", "by an admin"
    cp.save()
    assert load_demo_codes() == []
    cp.refresh_from_db()
    assert cp.code == "edited"


@pytest.mark.django_db
def test_a_model_admin_edits_a_code_in_the_admin_and_plain_staff_cannot(model_admin, trained_model):
    """The admin's change form saves a test's code for a model admin; staff outside the
    model-admins group are refused."""
    from django.contrib.auth.models import User

    test = trained_model.dataset.tests.get(name="glucose")
    code = TestCode.objects.create(test=test, system=LOCAL_TESTS, code="glucose")
    admin = Client()
    admin.force_login(model_admin)
    url = f"/admin/integration/testcode/{code.pk}/change/"
    form = {"test": test.pk, "system": LOINC, "code": "2345-7", "display": "", "unit": "mg/dL",
            "note": "2-hour value"}  # fmt: skip
    answer = admin.post(url, form)
    assert answer.status_code == 302, answer.content[:500]
    code.refresh_from_db()
    assert (code.system, code.code, code.unit) == (LOINC, "2345-7", "mg/dL")
    staff = Client()
    staff.force_login(User.objects.create_user("staff-only", is_staff=True))
    assert staff.post(url, dict(form, code="x")).status_code == 403
    code.refresh_from_db()
    assert code.code == "2345-7"
