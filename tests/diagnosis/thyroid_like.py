"""A small thyroid-like dataset (3 classes, free answers, priced labs, a derived FTI) for app tests.

Imported by the tests of tests/diagnosis as a plain module (tests/ has no packages).
"""

from __future__ import annotations

import numpy as np

CLASSES = ["normal", "hyperthyroid", "hypothyroid"]

THYROID_TESTS = [
    # Questionnaire answers are free; four priced lab tests; FTI is computed from TT4 and T4U.
    {"name": "age", "label": "Age", "unit": "years", "price": 0.0, "discounted_price": 0.0},
    {
        "name": "on_thyroxine",
        "label": "On thyroxine",
        "kind": "nominal",
        "price": 0.0,
        "discounted_price": 0.0,
        "choices": [{"code": 0, "label": "no"}, {"code": 1, "label": "yes"}],
    },
    {"name": "TSH", "label": "TSH", "price": 22.78, "discounted_price": 22.78},
    {"name": "T3", "label": "T3", "price": 11.41, "discounted_price": 11.41},
    {"name": "TT4", "label": "TT4", "price": 14.51, "discounted_price": 14.51},
    {"name": "T4U", "label": "T4U", "price": 11.41, "discounted_price": 11.41},
    {
        "name": "FTI",
        "label": "FTI",
        "price": 0.0,
        "discounted_price": 0.0,
        "derived_from": ["TT4", "T4U"],
    },
]


def thyroid_like_rows(n: int = 300, seed: int = 0):
    """Hypo when TSH is high, hyper when TSH is low and FTI high; over-75s are a coin toss."""
    rng = np.random.default_rng(seed)
    age = rng.uniform(20, 90, n).round()
    thyroxine = rng.integers(0, 2, n).astype(float)
    tsh = np.exp(rng.normal(0.3, 1.4, n)).round(2)
    t3 = rng.uniform(0.5, 4.0, n).round(2)
    tt4 = rng.uniform(40, 200, n).round(1)
    t4u = rng.uniform(0.6, 1.4, n).round(2)
    fti = (tt4 / t4u).round(1)
    labels = np.where(tsh > 6, 2, np.where((tsh < 0.5) & (fti > 120), 1, 0))
    # No test tells these patients' classes apart: the model should rather refer them.
    elderly = age > 75
    labels[elderly] = rng.integers(0, 3, int(elderly.sum()))
    rows = np.column_stack([age, thyroxine, tsh, t3, tt4, t4u, fti]).tolist()
    return rows, labels.tolist()
