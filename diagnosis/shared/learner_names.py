"""Learners in human words for tables and charts: "EG2, leaves of at least 10 patients".

The bench names each learner it compares.  Parameter names (``min_samples_leaf=10``) mean
nothing to a clinician, so a learner is named by its short name and, for each parameter that
differs from the training form's default, a phrase.  Words for a parameter come from the
registry's own form labels when no phrase below fits, so a new learner is named sensibly
without touching this module.

Experiments saved before these names existed stored labels such as ``eg2 (w=0.5)``;
:func:`display_label` turns such a label into words when it reads one, and keeps a label a
person typed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import learner_registry
from .money import format_money

__all__ = ["display_label", "human_label", "legacy_label"]

#: Short names, as the papers and the team call them.
SHORT_NAMES = {
    "eg2": "EG2",
    "c45": "C4.5",
    "boosting": "Boosting",
    "budget_rf": "BudgetRF",
    "dtmc": "DTMC",
    "optimal": "Least-cost short tree",
    "idx": "IDX",
    "csid3": "CS-ID3",
    "act": "ACT",
    "lsid3": "LSID3",
    "icet": "ICET",
    "conditioned_loss": "Conditioned loss",
}


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


#: A phrase per parameter name, for the parameters a model administrator varies most.
PHRASES: dict[str, Callable[[Any], str]] = {
    "min_samples_leaf": lambda v: f"leaves of at least {_number(v)} patients",
    "w": lambda v: f"cost weight {_number(v)}",
    "cf": lambda v: f"pruning confidence {_number(v)}",
    "budget": lambda v: f"test budget {format_money(v)} per patient",
    "r": lambda v: f"{_number(v)} sampled trees per lookahead",
    "n_trials": lambda v: f"{_number(v)} trees",
    "max_trees": lambda v: f"at most {_number(v)} trees",
    "max_depth": lambda v: f"up to {_number(v)} tests deep",
    "n_thresholds": lambda v: f"{_number(v)} cut-offs per test",
    "generations": lambda v: f"{_number(v)} generations",
    "population": lambda v: f"{_number(v)} trees per generation",
    "time_budget_seconds": lambda v: f"stopped after {_number(v)} s",
}


def _phrase(param: learner_registry.ParamSpec, value: Any) -> str:
    if param.name in PHRASES:
        return PHRASES[param.name](value)
    label = param.label.split(" (")[0]
    label = label[:1].lower() + label[1:] if not label[:2].isupper() else label
    if param.type == "bool":
        return label if value else f"no {label}"
    if param.type == "choice":
        words = dict(param.choices).get(value, str(value))
        return f"{label}: {words}"
    return f"{label} {_number(value)}"


def human_label(key: str, params: Mapping[str, Any] | None) -> str:
    """The learner in words: its short name, then each parameter changed from the default."""
    spec = learner_registry.LEARNERS.get(key)
    if spec is None:
        return key
    values = dict(params or {})
    name = SHORT_NAMES.get(key, spec.label)
    if key == "boosting" and values.get("cost_sensitive"):
        name = "Cost-Boosting"
    changed = [
        _phrase(p, values[p.name])
        for p in spec.params
        if p.name in values
        and values[p.name] is not None
        and values[p.name] != p.default
        and not (key == "boosting" and p.name == "cost_sensitive")
    ]
    return ", ".join([name, *changed])


def legacy_label(key: str, params: Mapping[str, Any] | None) -> str:
    """The label experiments stored before :func:`human_label`: ``eg2 (w=0.5)``."""
    spec = learner_registry.LEARNERS.get(key)
    if spec is None:
        return key
    defaults = spec.defaults()
    changed = [
        f"{name}={_number(value)}"
        for name, value in (params or {}).items()
        if value != defaults.get(name) and value is not None
    ]
    return key + (f" ({', '.join(changed)})" if changed else "")


def display_label(entry: Mapping[str, Any]) -> str:
    """How an experiment's learner entry is shown: its label, in words when it was stored as
    parameter names by an older version."""
    label = str(entry.get("label") or "")
    key, params = entry.get("key", ""), entry.get("params") or {}
    if entry.get("baseline"):
        return label
    if not label or label == legacy_label(key, params):
        return human_label(key, params)
    return label
