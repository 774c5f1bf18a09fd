"""The learners a model administrator can train, with their parameter forms.

Screens render the training form from :class:`ParamSpec` and never name a
learner; adding a learner to the product is adding an entry to ``LEARNERS``.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping, Sequence
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
    #: False for settings of the training run itself (a time budget), not of the estimator.
    estimator_param: bool = True

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
    #: For anytime learners: the parameter raised round by round (1, 2, 4, ... up to its value).
    anytime_param: str = ""
    #: ``check(cost_model, cleaned_params)`` -> problems that make training pointless, said
    #: when the training is requested rather than after it failed on the worker.
    check: Callable[[Any, Mapping[str, Any]], list[str]] | None = None

    def estimator_class(self):
        """The estimator class, imported on first use."""
        module, _, name = self.estimator_class_path.rpartition(".")
        return getattr(importlib.import_module(module), name)

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def estimator_params(self, cleaned: Mapping[str, Any]) -> dict[str, Any]:
        """The cleaned parameters that are the estimator's own (run settings left out)."""
        passed = {p.name for p in self.params if p.estimator_param}
        return {name: value for name, value in cleaned.items() if name in passed}


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


def _check_subsets(cost_model, params: Mapping[str, Any]) -> list[str]:
    """The conditioned-loss model trains 2^m classifiers for m priced tests: bound it early."""
    derived = {int(k) for k in cost_model.derived}
    priced = [
        f
        for f in range(cost_model.n_features)
        if f not in derived and cost_model.marginal_cost(f, ()) > 0
    ]
    needed = 1 << len(priced)
    bound = int(params["max_subsets"])
    if needed <= bound:
        return []
    return [
        f"This dataset has {len(priced)} priced tests, so the conditioned-loss model would "
        f"train 2^{len(priced)} = {needed} classifiers, more than 'Most test subsets' "
        f"({bound}). Make tests that cost nothing (questionnaire answers) free with price 0, "
        "or derive computed ones from their inputs, or raise the bound."
    ]


_TIME_BUDGET = ParamSpec(
    "time_budget_seconds",
    "Time budget (seconds, optional)",
    "float",
    None,
    min=1.0,
    max=86400.0,
    help="Stop raising r after this long and keep the best model so far (the first round "
    "always finishes). Empty: no budget; you can still stop it from the model page.",
    estimator_param=False,
)

_LOOKAHEAD_R = ParamSpec(
    "r",
    "Sample size r",
    "int",
    8,
    min=0,
    max=64,
    help="The anytime knob: training runs r = 1, 2, 4, ... up to this value and keeps the "
    "best model; time grows about linearly with r. 0 is the greedy tree.",
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
    "dtmc": LearnerSpec(
        key="dtmc",
        label="DTMC tree (Ling et al., least total cost)",
        estimator_class_path="learners.tree.DTMCClassifier",
        description="Chooses the test that most lowers test plus misclassification cost.",
        params=(
            *_TREE_PARAMS[:2],
            ParamSpec("prune", "Prune the tree", "bool", False, help="C4.5 error-based pruning."),
        ),
    ),
    "idx": LearnerSpec(
        key="idx",
        label="IDX tree (Norton, gain per unit of price)",
        estimator_class_path="learners.tree.IDXClassifier",
        description="Chooses tests by information gain divided by price.",
        params=_TREE_PARAMS,
    ),
    "csid3": LearnerSpec(
        key="csid3",
        label="CS-ID3 tree (Tan, squared gain per unit of price)",
        estimator_class_path="learners.tree.CSID3Classifier",
        description="Chooses tests by squared information gain divided by price.",
        params=_TREE_PARAMS,
    ),
    "act": LearnerSpec(
        key="act",
        label="ACT anytime cost-sensitive tree (Esmeir & Markovitch)",
        estimator_class_path="learners.act.ACTClassifier",
        description="Looks ahead with sampled trees to lower test plus error cost; more "
        "training time (larger r) finds cheaper trees. Can be stopped at any time.",
        anytime=True,
        anytime_param="r",
        params=(
            _LOOKAHEAD_R,
            ParamSpec(
                "w",
                "Cost weight w (optional)",
                "float",
                None,
                min=0.0,
                max=10.0,
                help="EG2's cost emphasis in the sample trees; empty derives it from the costs.",
            ),
            ParamSpec(
                "cf",
                "Pruning confidence (optional)",
                "float",
                None,
                min=0.001,
                max=0.999,
                help="Confidence of the pessimistic error estimate; empty derives it from "
                "the costs.",
            ),
            ParamSpec(
                "stop_rule",
                "When a branch stops growing",
                "choice",
                "leaf_cost",
                choices=(
                    ("leaf_cost", "when no test beats a leaf's cost"),
                    ("prune", "grow fully, then prune by cost"),
                ),
                help="The default stops where no test pays for itself.",
            ),
            _TIME_BUDGET,
        ),
    ),
    "lsid3": LearnerSpec(
        key="lsid3",
        label="LSID3 anytime tree (ignores prices, smallest tree)",
        estimator_class_path="learners.act.LSID3Classifier",
        description="Looks ahead with sampled ID3 trees for the smallest tree; cost-blind. "
        "Can be stopped at any time.",
        anytime=True,
        anytime_param="r",
        params=(_LOOKAHEAD_R, _TIME_BUDGET),
    ),
    "icet": LearnerSpec(
        key="icet",
        label="ICET genetic cost-sensitive tree (Turney)",
        estimator_class_path="learners.act.ICETClassifier",
        description="Evolves biased test costs for EG2 over generations; fitness is the true "
        "cost on a held-out half of the training cases.",
        params=(
            ParamSpec(
                "generations",
                "Generations",
                "int",
                20,
                min=1,
                max=500,
                help="More generations search longer for cheaper trees.",
            ),
            ParamSpec(
                "population",
                "Population size",
                "int",
                50,
                min=4,
                max=500,
                help="Trees per generation.",
            ),
        ),
    ),
    "conditioned_loss": LearnerSpec(
        key="conditioned_loss",
        label="Conditioned loss: classify, test or refer (Cebe & Gunduz-Demir)",
        estimator_class_path="learners.conditioned_loss.ConditionedLossClassifier",
        check=_check_subsets,
        description="For each patient, step by step: classify now, order one more test, or "
        "refer, whichever has the lowest risk. Tests priced 0 are free and derived tests "
        "come from the prices; the error matrix only prices its mistakes in the report.",
        params=(
            ParamSpec(
                "reward",
                "REWARD",
                "float",
                100.0,
                min=0.0,
                max=1e9,
                help="Reward of a correct decision that more tests would not change.",
            ),
            ParamSpec(
                "penalty",
                "PENALTY",
                "float",
                10000.0,
                min=0.0,
                max=1e9,
                help="Penalty of a wrong decision; larger makes it test or refer more.",
            ),
            ParamSpec(
                "max_subsets",
                "Most test subsets",
                "int",
                64,
                min=1,
                max=4096,
                help="Bound on 2^m for m priced tests (2^m classifiers are trained); training "
                "fails with a clear message when the dataset has more priced tests.",
            ),
        ),
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
    """An unfitted estimator of learner ``key`` configured with prices, matrix and params.

    Each learner gets only the shared arguments its class takes: the
    conditioned-loss model, for one, has no ``cost_matrix`` (its PENALTY
    plays that part) and reads its free and derived tests from ``cost_model``.
    Run settings (``ParamSpec.estimator_param`` false) are not passed.
    """
    spec = get_spec(key)
    cls = spec.estimator_class()
    accepted = set(cls().get_params(deep=False))
    shared = {
        "test_costs": cost_model,
        "cost_matrix": cost_matrix,
        "reject_cost": reject_cost,
        "categorical_features": list(categorical_features or ()) or None,
        "random_state": random_state,
    }
    own = spec.estimator_params(clean_params(key, params))
    unknown = sorted(set(own) - accepted)
    if unknown:  # a registry bug, caught by the registry tests
        raise ValueError(f"{cls.__name__} takes no parameter {', '.join(unknown)}")
    return cls(**{name: value for name, value in shared.items() if name in accepted}, **own)
