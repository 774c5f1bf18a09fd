"""Codes on the catalog (issue 31): each test's LOINC (or local) code and UCUM unit, each
class's SNOMED CT / ICD-10 (or local) code.  The demo datasets' mappings ship in
``fixtures/fhir/demo_codes.json``, with a note wherever no standard code is asserted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.db import transaction

from diagnosis.catalog.models import Dataset
from diagnosis.integration.models import (
    ICD_10,
    LOCAL_CLASSES,
    LOCAL_TESTS,
    LOINC,
    SNOMED_CT,
    ClassCode,
    TestCode,
)

__all__ = ["DEMO_CODES", "load_demo_codes"]

#: the demo datasets' codes, keyed by dataset name
DEMO_CODES = Path(__file__).resolve().parents[3] / "fixtures" / "fhir" / "demo_codes.json"

_SYSTEMS = {"loinc": LOINC, "snomed": SNOMED_CT, "icd10": ICD_10}


@transaction.atomic
def load_demo_codes(*, path: Path = DEMO_CODES) -> list[str]:
    """Give every demo dataset present the codes of ``path`` it does not have yet (a code an
    admin has since edited stays as edited); the lines saying what was added."""
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    said = []
    for name, codes in document["datasets"].items():
        dataset = Dataset.objects.filter(name=name).first()
        if dataset is None:
            continue
        added = 0
        for test in dataset.tests.filter(fhir_code__isnull=True):
            entry = codes["tests"].get(test.name)
            if entry is None:
                continue
            local = entry["system"] == "local"
            TestCode.objects.create(
                test=test,
                system=LOCAL_TESTS if local else _SYSTEMS[entry["system"]],
                code=test.name if local else entry["code"],
                display=entry.get("display") or test.display_label,
                unit=entry.get("unit", ""),
                note=entry.get("note", ""),
            )
            added += 1
        have = set(dataset.class_codes.values_list("label_index", flat=True))
        for index, entry in enumerate(codes["classes"]):
            if index in have or index >= len(dataset.class_labels):
                continue
            local = entry["system"] == "local"
            ClassCode.objects.create(
                dataset=dataset,
                label_index=index,
                system=LOCAL_CLASSES if local else _SYSTEMS[entry["system"]],
                code=entry["code"],
                display=entry.get("display", ""),
                note=entry.get("note", ""),
            )
            added += 1
        if added:
            said.append(f"Codes for {name}: {added} added")
    return said
