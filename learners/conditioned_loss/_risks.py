"""Conditional risks of classify, reject and extract_k (ALGORITHMS.md §5)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["actual_class_belief", "classify_risk", "extract_risk", "reject_risk"]


def classify_risk(p: np.ndarray, reward: float, penalty: float) -> float:
    """``R(classify) = sum_j p(j) [-p(j) REWARD + (1 - p(j)) PENALTY]``."""
    p = np.asarray(p, dtype=float)
    return float(np.sum(p * (-p * reward + (1.0 - p) * penalty)))


def reject_risk(
    p: np.ndarray, q_not_bought: Mapping[int, np.ndarray], reward: float, penalty: float
) -> float:
    """``R(reject) = sum_j p(j) [-Z_j REWARD + (1 - Z_j) PENALTY]``.

    ``Z_j = (1 - p(j)) prod_m (1 - q_m(j))`` over the tests m not bought:
    referral is right only if neither the current classifier nor any
    classifier one test away would get class j.
    """
    p = np.asarray(p, dtype=float)
    z = 1.0 - p
    for q in q_not_bought.values():
        z = z * (1.0 - np.asarray(q, dtype=float))
    return float(np.sum(p * (-z * reward + (1.0 - z) * penalty)))


def actual_class_belief(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``a_k(j) ∝ p(j) q_k(j)``; p itself when the product vanishes everywhere."""
    product = np.asarray(p, dtype=float) * np.asarray(q, dtype=float)
    total = product.sum()
    if total <= 0:
        return np.asarray(p, dtype=float)
    return product / total


def extract_risk(p: np.ndarray, q: np.ndarray, cost: float, reward: float, penalty: float) -> float:
    """The risk of extracting test k.

    ``R(extract_k) = sum_j a_k(j) [cost_k + (1 - q_k(j)) PENALTY - (1 - p(j)) q_k(j) REWARD]``.
    """
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    a = actual_class_belief(p, q)
    return float(np.sum(a * (cost + (1.0 - q) * penalty - (1.0 - p) * q * reward)))
