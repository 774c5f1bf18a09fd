"""Shared fixtures for the learner tests: small tables and the UCI data location."""

import os
from pathlib import Path

import numpy as np
import pytest


def shared_dir() -> Path:
    """The read-only shared material (papers, data): $SHARED_DIR or <repo>/../shared."""
    env = os.environ.get("SHARED_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / ".." / "shared"


@pytest.fixture
def uci_dir() -> Path:
    """The shared UCI data folder (read through ../shared, never copied into the repository)."""
    return shared_dir() / "data" / "uci"


@pytest.fixture
def cheap_vs_informative():
    """32 cases: x0 separates the classes perfectly (1 bit), x1 gets 3 in 4 right (0.189 bit)."""
    y8 = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    x1 = np.array([0, 0, 0, 1, 1, 1, 1, 0])
    y = np.tile(y8, 4)
    X = np.column_stack([y, np.tile(x1, 4)]).astype(float)
    return X, y


@pytest.fixture
def noisy_table():
    """300 cases, 4 numeric features and one nominal (codes 0-2), 10% missing values."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 5))
    X[:, 4] = rng.integers(0, 3, 300)
    y = np.where(X[:, 0] + 0.8 * X[:, 4] + 0.3 * rng.normal(size=300) > 1.0, "sick", "well")
    X[rng.random((300, 5)) < 0.1] = np.nan
    return X, y
