"""The app tests' toy dataset and password, importable by name from any test process (a test
module importing ``conftest`` gets whichever conftest that process loaded last)."""

from __future__ import annotations

import numpy as np

#: the password tests/diagnosis/conftest.py gives every user it makes
PASSWORD = "pw-for-tests-123"

TOY_TESTS = [
    # Two tests sharing a blood draw (group "blood"): the second one is cheap.
    {
        "name": "glucose",
        "label": "Glucose",
        "unit": "mg/dl",
        "price": 10.0,
        "discounted_price": 2.0,
        "group": "blood",
        "delayed": True,
        "min_value": 0,
        "max_value": 500,
    },
    {
        "name": "insulin",
        "label": "Insulin",
        "unit": "mu U/ml",
        "price": 12.0,
        "discounted_price": 3.0,
        "group": "blood",
        "delayed": True,
    },
    {
        "name": "sex",
        "label": "Sex",
        "kind": "nominal",
        "price": 1.0,
        "discounted_price": 1.0,
        "choices": [{"code": 0, "label": "female"}, {"code": 1, "label": "male"}],
    },
]


def toy_rows(n: int = 120, seed: int = 0):
    """Disease exactly when glucose > 140 and insulin > 100 (the tree needs both blood tests)."""
    rng = np.random.default_rng(seed)
    glucose = rng.uniform(60, 220, n).round(1)
    insulin = rng.uniform(20, 200, n).round(1)
    sex = rng.integers(0, 2, n).astype(float)
    labels = ((glucose > 140) & (insulin > 100)).astype(int)
    rows = [[float(g), float(i), float(s)] for g, i, s in zip(glucose, insulin, sex, strict=True)]
    return rows, labels.tolist()
