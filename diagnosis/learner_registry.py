"""The learners a model administrator can train, with their parameter forms.

Screens render the training form from :class:`ParamSpec` and never name a
learner; adding a learner to the product is adding an entry to ``LEARNERS``.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError

__all__ = ["LEARNERS", "LearnerSpec", "ParamSpec", "build_estimator", "clean_params", "get_spec"]


@dataclass(frozen=True)
class ParamSpec:
    """One learner parameter as a form field: type ``float``, ``int``, ``choice`` or ``bool``."""

    name: str
    label: str
    type: str
    default: Any
    min: float | None = None
    max: float | None = None
    choices: tuple[tuple[Any, str], ...] = ()
    help: str = ""

    def clean(self, raw: Any) -> Any:
        """The value ``raw`` converted to this parameter's type, or ValidationError."""
        if raw is None or raw == "":
            return self.default
        try:
            if self.type == "bool":
                value = _as_bool(raw)
            elif self.type == "int":
                value = int(raw) if not isinstance(raw, float) or raw.is_integer() else None
                if value is None:
                    raise ValueError
            elif self.type == "float":
                value = float(raw)
                if not math.isfinite(value):
                    raise ValueError
            elif self.type == "choice":
                allowed = {str(c[0]): c[0] for c in self.choices}
                if str(raw) not in allowed:
                    raise ValidationError(
                        f"{self.label}: {raw!r} is not one of "
                        + ", ".join(str(c[0]) for c in self.choices)
                    )
                value = allowed[str(raw)]
            else:  # pragma: no cover - a registry bug, caught by the registry tests
                raise ValidationError(f"{self.label}: unknown parameter type {self.type!r}")
        except (TypeError, ValueError):
            raise ValidationError(f"{self.label}: {raw!r} is not a valid {self.type}") from None
        if self.type in ("int", "float"):
            if self.min is not None and value < self.min:
                raise ValidationError(f"{self.label} must be at least {self.min:g} (got {value:g})")
            if self.max is not None and value > self.max:
                raise ValidationError(f"{self.label} must be at most {self.max:g} (got {value:g})")
        return value


@dataclass(frozen=True)
class LearnerSpec:
    """A trainable learner: its estimator class and the parameters an admin may set."""

    key: str
    label: str
    estimator_class_path: str
    params: Sequence[ParamSpec] = field(default_factory=tuple)
    anytime: bool = False
    description: str = ""

    def estimator_class(self):
        """The estimator class, imported on first use."""
        module, _, name = self.estimator_class_path.rpartition(".")
        return getattr(importlib.import_module(module), name)

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}


def _as_bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    raise ValueError(raw)


_TREE_PARAMS = (
    ParamSpec(
        "cf",
        "Pruning confidence",
        "float",
        0.25,
        min=0.001,
        max=0.999,
        help="C4.5's CF: smaller prunes more.",
    ),
    ParamSpec(
        "min_samples_leaf",
        "Minimum cases per branch",
        "float",
        2.0,
        min=1.0,
        max=1000.0,
        help="A split needs two branches with at least this many training cases.",
    ),
    ParamSpec("prune", "Prune the tree", "bool", True, help="C4.5 error-based pruning."),
)

LEARNERS: dict[str, LearnerSpec] = {
    "eg2": LearnerSpec(
        key="eg2",
        label="EG2 cost-sensitive tree (Núñez)",
        estimator_class_path="learners.tree.EG2Classifier",
        description="Chooses tests by information gain per unit of price; prunes like C4.5.",
        params=(
            ParamSpec(
                "w",
                "Cost weight w",
                "float",
                1.0,
                min=0.0,
                max=10.0,
                help="0 ignores prices; 1 weighs information against price fully.",
            ),
            *_TREE_PARAMS,
        ),
    ),
    "c45": LearnerSpec(
        key="c45",
        label="C4.5 tree (ignores prices)",
        estimator_class_path="learners.tree.C45Classifier",
        description="Quinlan's C4.5 with minimum-expected-cost leaf decisions.",
        params=_TREE_PARAMS,
    ),
}


def get_spec(key: str) -> LearnerSpec:
    """The spec of learner ``key``, or ValidationError naming the known ones."""
    try:
        return LEARNERS[key]
    except KeyError:
        raise ValidationError(
            f"Unknown learner {key!r}; choose one of: {', '.join(sorted(LEARNERS))}"
        ) from None


def clean_params(key: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validated parameters for learner ``key`` (defaults filled in; unknown names rejected)."""
    spec = get_spec(key)
    params = dict(params or {})
    known = {p.name for p in spec.params}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValidationError(
            f"{spec.label} has no parameter {', '.join(map(repr, unknown))}"
            + (f"; its parameters are {', '.join(sorted(known))}" if known else "")
        )
    errors = []
    cleaned = {}
    for p in spec.params:
        try:
            cleaned[p.name] = p.clean(params.get(p.name))
        except ValidationError as exc:
            errors.extend(exc.messages)
    if errors:
        raise ValidationError(errors)
    return cleaned


def build_estimator(
    key: str,
    params: Mapping[str, Any] | None,
    *,
    cost_model,
    cost_matrix,
    reject_cost,
    categorical_features,
    random_state,
):
    """An unfitted estimator of learner ``key`` configured with prices, matrix and params."""
    spec = get_spec(key)
    cls = spec.estimator_class()
    return cls(
        test_costs=cost_model,
        cost_matrix=cost_matrix,
        reject_cost=reject_cost,
        categorical_features=list(categorical_features or ()) or None,
        random_state=random_state,
        **clean_params(key, params),
    )
