"""The project's datasets under ``<shared>/data/uci``, loaded by key (``load_known("heart")``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from learners import CostModel

from .dataset import UCIDataset
from .uci_folder import read_uci_folder

__all__ = ["KNOWN_DATASETS", "default_shared_dir", "load_known"]

#: key -> (folder under data/uci, data file stem or None)
KNOWN_DATASETS: dict[str, tuple[str, str | None]] = {
    "heart": ("heart-disease", "processed.cleveland"),
    "hepatitis": ("hepatitis", "hepatitis"),
    "thyroid-train": ("thyroid-disease", "ann-train"),
    "thyroid-test": ("thyroid-disease", "ann-test"),
    "pima": ("pima-indians-diabetes", "pima-indians-diabetes"),
    "bupa": ("liver-disorders", "bupa"),
}

# DATA.md: secondary sources (Turney's raw file was not found).
_PIMA_PRICES = {"glucose": (17.61, 15.51), "insulin": (22.78, 20.68)}


def default_shared_dir() -> Path:
    """``$SHARED_DIR`` if set, else ``<repo>/../shared``."""
    env = os.environ.get("SHARED_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[1] / ".." / "shared"


def load_known(key: str, *, shared_dir=None, **options) -> UCIDataset:
    """Load one of :data:`KNOWN_DATASETS` from ``<shared_dir>/data/uci``.

    Parameters
    ----------
    key : {"heart", "hepatitis", "thyroid-train", "thyroid-test", "pima", "bupa"}
    shared_dir : str or Path, optional
        Default :func:`default_shared_dir`.
    **options
        ``binary`` (heart), ``questionnaire_free`` (thyroid).

    Notes
    -----
    Pima has no Turney cost files; it gets DATA.md's secondary prices
    (glucose and insulin one delayed group, the rest 1.00).  BUPA has no
    prices (``costs`` is None).
    """
    if key not in KNOWN_DATASETS:
        raise KeyError(f"unknown dataset {key!r}; known: {sorted(KNOWN_DATASETS)}")
    folder, stem = KNOWN_DATASETS[key]
    base = Path(shared_dir) if shared_dir is not None else default_shared_dir()
    dataset = read_uci_folder(base / "data" / "uci" / folder, name=stem, **options)
    dataset = replace(dataset, name=key)
    if key == "pima":
        dataset = replace(dataset, costs=_pima_costs(dataset.feature_names))
    return dataset


def _pima_costs(features: Sequence[str]) -> CostModel:
    full = [_PIMA_PRICES.get(f, (1.0, 1.0))[0] for f in features]
    discounted = [_PIMA_PRICES.get(f, (1.0, 1.0))[1] for f in features]
    groups = ["A" if f in _PIMA_PRICES else None for f in features]
    return CostModel(
        full, discounted=discounted, groups=groups, delayed=[f in _PIMA_PRICES for f in features]
    )
