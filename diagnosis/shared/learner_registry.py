"""The learners a model administrator can train, with their parameter forms.

Screens render the training form from :class:`ParamSpec` and never name a
learner; adding a learner to the product is adding an entry to ``LEARNERS``.

An entry says which estimator parameters the form shows and in what words
(:class:`FormParam`); each parameter's type, range, choices and default
come from the estimator class itself (its scikit-learn
``_parameter_constraints`` and ``__init__`` defaults), so the form and the
learner cannot disagree about what is allowed.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from numbers import Integral
from typing import Any

from django.core.exceptions import ValidationError

__all__ = [
    "DEFAULT_LEARNER",
    "LEARNERS",
    "FormParam",
    "LearnerSpec",
    "ParamSpec",
    "build_estimator",
    "clean_params",
    "get_spec",
    "param_spec_from_estimator",
]


@dataclass(frozen=True)
class ParamSpec:
    """One learner parameter as a form field: type ``float``, ``int``, ``choice`` or ``bool``.

    ``closed`` says which bounds are allowed values: ``"both"``, ``"left"``
    (``min`` only), ``"right"`` (``max`` only) or ``"neither"``.
    """

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
    closed: str = "both"

    def clean(self, raw: Any) -> Any:
        """The value ``raw`` converted to this parameter's type, or ValidationError."""
        if raw is None or raw == "":
            return self.default
        value: Any
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
            with_min = self.closed in ("both", "left")
            with_max = self.closed in ("both", "right")
            if self.min is not None and (value < self.min if with_min else value <= self.min):
                bound = "at least" if with_min else "above"
                raise ValidationError(f"{self.label} must be {bound} {self.min:g} (got {value:g})")
            if self.max is not None and (value > self.max if with_max else value >= self.max):
                bound = "at most" if with_max else "below"
                raise ValidationError(f"{self.label} must be {bound} {self.max:g} (got {value:g})")
        return value


_FROM_ESTIMATOR = object()


@dataclass(frozen=True)
class FormParam:
    """An estimator parameter the training form shows, in the form's words.

    Its type, bounds, choices and default are read from the estimator class
    (:func:`param_spec_from_estimator`); only ``default`` may be given here,
    where the form should propose another value than the estimator's.
    """

    name: str
    label: str
    help: str = ""
    #: Words for the options of a choice, by option; options left out show as themselves.
    choice_labels: Mapping[str, str] = field(default_factory=dict)
    default: Any = _FROM_ESTIMATOR


def param_spec_from_estimator(estimator_class, form: FormParam) -> ParamSpec:
    """The form field of ``form.name`` with the estimator's constraint and default.

    An ``Interval`` constraint gives an ``int`` or ``float`` field with its
    bounds (an unbounded side, or an infinite one, has none); ``StrOptions``
    a ``choice``; ``"boolean"`` a ``bool``.  ``None`` among the constraints
    only means the field may be left empty.

    Raises
    ------
    ValueError
        When the estimator has no such parameter, or its constraint is not
        one a form field can hold (a registry bug, caught by its tests).
    """
    from sklearn.utils._param_validation import Interval, StrOptions

    name = form.name
    rules = getattr(estimator_class, "_parameter_constraints", {}).get(name)
    if rules is None:
        raise ValueError(f"{estimator_class.__name__} declares no constraint for {name!r}")
    default = form.default
    if default is _FROM_ESTIMATOR:
        default = inspect.signature(estimator_class).parameters[name].default
    common = {"name": name, "label": form.label, "default": default, "help": form.help}
    fields = [rule for rule in rules if rule is not None]
    numbers = [rule for rule in fields if isinstance(rule, Interval)]
    if len(numbers) == 1 and all(
        isinstance(rule, StrOptions) for rule in fields if rule is not numbers[0]
    ):
        # A number that may also be a word (BudgetRF's budget="auto"): the form offers the
        # number; the word stays the library's until a form field can hold both.
        fields = numbers
    if len(fields) == 1 and isinstance(fields[0], Interval):
        interval = fields[0]
        return ParamSpec(
            type="int" if interval.type is Integral else "float",
            min=_finite(interval.left),
            max=_finite(interval.right),
            closed=interval.closed,
            **common,
        )
    if len(fields) == 1 and isinstance(fields[0], StrOptions):
        options = fields[0].options
        ordered = [o for o in form.choice_labels if o in options]
        ordered += sorted(options - set(ordered))
        return ParamSpec(
            type="choice",
            choices=tuple((o, form.choice_labels.get(o, o)) for o in ordered),
            **common,
        )
    if fields == ["boolean"]:
        return ParamSpec(type="bool", **common)
    raise ValueError(
        f"{estimator_class.__name__}.{name} has constraints {rules!r}, which no form field holds"
    )


def _finite(bound) -> float | None:
    return None if bound is None or not math.isfinite(bound) else bound


@dataclass(frozen=True)
class LearnerSpec:
    """A trainable learner: its estimator class and the parameters an admin may set.

    ``form`` lists the fields in display order: a :class:`FormParam` for an
    estimator parameter, a full :class:`ParamSpec` for a setting of the
    training run (``estimator_param=False``), which no estimator constrains.
    """

    key: str
    label: str
    estimator_class_path: str
    form: Sequence[FormParam | ParamSpec] = field(default_factory=tuple)
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

    @cached_property
    def params(self) -> tuple[ParamSpec, ...]:
        """The form's fields; estimator parameters typed and bounded by the estimator class."""
        cls = self.estimator_class()
        return tuple(
            param_spec_from_estimator(cls, p) if isinstance(p, FormParam) else p for p in self.form
        )

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
    FormParam("cf", "Pruning confidence", help="C4.5's CF: smaller prunes more."),
    FormParam(
        "min_samples_leaf",
        "Minimum cases per branch",
        help="A split needs two branches with at least this many training cases.",
    ),
    FormParam(
        "pruning",
        "Pruning",
        choice_labels={
            "error": "C4.5 error-based",
            "none": "none (keep the grown tree)",
            "laplace": "Laplace-based, with the error costs",
            "cost_complexity": "cost-complexity with the error costs (20% holdout)",
            "kl": "KL distance (keeps trees whose leaves differ)",
        },
        help="How the grown tree is cut back (Bradford et al. 1998); all but C4.5's use the "
        "error matrix or the leaf distributions.",
    ),
    FormParam(
        "probability",
        "Leaf probabilities",
        choice_labels={"laplace": "Laplace-corrected", "frequency": "frequency"},
        help="Laplace (n_c + 1)/(n + K) keeps leaves from claiming certainty.",
    ),
)


def _check_subsets(cost_model, params: Mapping[str, Any]) -> list[str]:
    """The conditioned-loss model trains 2^m classifiers for m priced tests: bound it early."""
    from learners.conditioned_loss import ConditionedLossClassifier

    n_priced, needed = ConditionedLossClassifier.states_needed(cost_model)
    bound = int(params["max_subsets"])
    if needed <= bound:
        return []
    return [
        f"This dataset has {n_priced} priced tests, so the conditioned-loss model would "
        f"train 2^{n_priced} = {needed} classifiers, more than 'Most test subsets' "
        f"({bound}). Make tests that cost nothing (questionnaire answers) free with price 0, "
        "or derive computed ones from their inputs, or raise the bound."
    ]


def _check_budget(cost_model, params: Mapping[str, Any]) -> list[str]:
    """A budget below the cheapest test cannot order anything: say so before training."""
    from learners.forest import BudgetRFClassifier

    problem = BudgetRFClassifier.budget_problem(cost_model, params.get("budget"))
    return [] if problem is None else [f"Test budget: {problem}."]


#: A setting of the anytime training run, not of any estimator: its range is this form's own.
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

_LOOKAHEAD_R = FormParam(
    "r",
    "Sample size r",
    help="The anytime knob: training runs r = 1, 2, 4, ... up to this value and keeps the "
    "best model; time grows about linearly with r. 0 is the greedy tree.",
    # The rounds double r, so the form proposes a power of two (the estimator's own is 5).
    default=8,
)

#: The learner the training form proposes: the selector, which measures the others on the
#: dataset's own patients and keeps the cheapest (single learners stay for research).
DEFAULT_LEARNER = "cost_selected"

LEARNERS: dict[str, LearnerSpec] = {
    "cost_selected": LearnerSpec(
        key="cost_selected",
        label="Let the data choose (cheapest learner by cross-validated cost)",
        estimator_class_path="learners.selection.CostSelectedClassifier",
        description="Trains every learner below at a few settings, and the two simple "
        "strategies (order no test; order every test, then a tree), on repeated folds of "
        "the training patients, prices each held-out patient as the model page does, and "
        "keeps the one of least cost per patient, retrained on all of them. Its model page "
        "lists what each candidate cost.",
        form=(
            FormParam(
                "time_budget",
                "Time to choose (seconds)",
                help="Candidates still waiting when this is spent are left out, and the "
                "selection report says which.",
            ),
        ),
    ),
    "eg2": LearnerSpec(
        key="eg2",
        label="EG2 cost-sensitive tree (Núñez)",
        estimator_class_path="learners.tree.EG2Classifier",
        description="Chooses tests by information gain per unit of price; prunes like C4.5.",
        form=(
            FormParam(
                "w",
                "Cost weight w",
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
        form=_TREE_PARAMS,
    ),
    "boosting": LearnerSpec(
        key="boosting",
        label="Boosted C4.5 trees (Ting & Zheng): one model for any error matrix",
        estimator_class_path="learners.boosting.BoostingClassifier",
        description="Boosted C4.5 trees vote by least expected cost. Plain Boosting never "
        "looks at the error matrix while training, so it serves a matrix changed later "
        "without retraining; Cost-Boosting weighs each training mistake by its cost and must "
        "be retrained when the matrix changes.",
        form=(
            FormParam(
                "n_trials",
                "Trials (trees)",
                help="Boosting rounds, one tree each; the paper used 10.",
            ),
            FormParam(
                "cost_sensitive",
                "Cost-Boosting",
                help="Weigh mistakes by their cost while training (every error must cost at "
                "least 1); the model then serves only this matrix.",
            ),
            FormParam("cf", "Pruning confidence", help="C4.5's CF for each tree."),
            FormParam(
                "min_samples_leaf",
                "Minimum cases per branch",
                help="A split needs two branches with at least this much (weighted) case mass.",
            ),
            FormParam(
                "pruning",
                "Pruning of each tree",
                choice_labels={"error": "C4.5 error-based", "none": "none"},
            ),
        ),
    ),
    "budget_rf": LearnerSpec(
        key="budget_rf",
        label="Feature-budgeted random forest (Nan et al.): stays within a test budget",
        estimator_class_path="learners.forest.BudgetRFClassifier",
        check=_check_budget,
        description="Cheap trees grown on bootstrap samples are added while the average "
        "patient's tests, measured on held-out cases, stay within the budget. The forest "
        "orders the test most of its trees wait on and concludes when every tree is at a leaf.",
        form=(
            FormParam(
                "budget",
                "Test budget per patient (optional)",
                help="Most the average patient may spend on tests, in the dataset's prices. "
                "Empty: no budget (the most trees are grown).",
            ),
            FormParam("max_trees", "Most trees", help="The forest never grows beyond this."),
            FormParam(
                "impurity",
                "Split impurity",
                choice_labels={
                    "pairs": "threshold-Pairs (alpha chosen on held-out cases)",
                    "powers": "Powers",
                },
                help="Both are admissible (the paper's cost guarantee holds for either).",
            ),
            FormParam("power", "Powers exponent l", help="Used only with Powers."),
            FormParam(
                "probability",
                "Forest probabilities",
                choice_labels={
                    "frequency": "summed leaf counts",
                    "laplace": "Laplace-corrected",
                    "laplace_leaves": "Laplace-corrected in each tree, then averaged",
                },
            ),
        ),
    ),
    "dtmc": LearnerSpec(
        key="dtmc",
        label="DTMC tree (Ling et al., least total cost)",
        estimator_class_path="learners.tree.DTMCClassifier",
        description="Chooses the test that most lowers test plus misclassification cost.",
        form=_TREE_PARAMS,
    ),
    "optimal": LearnerSpec(
        key="optimal",
        label="Least-cost short tree (exact search, up to 3 tests deep)",
        estimator_class_path="learners.tree.OptimalTreeClassifier",
        description="Looks through every tree of up to three levels over a few cut-offs "
        "per measured test and keeps the one of least test plus error cost on the training "
        "cases: a short checklist, exact rather than greedy.",
        form=(
            FormParam("max_depth", "Tests on a path at most", help="1 to 3."),
            FormParam(
                "n_thresholds",
                "Cut-offs per measured test",
                help="Candidate thresholds of a numeric test; few keep the tree from fitting "
                "noise.",
            ),
            FormParam(
                "threshold_rule",
                "Where the cut-offs sit",
                choice_labels={
                    "quantile": "evenly spaced quantiles",
                    "gain": "most informative on the training cases",
                },
            ),
            FormParam(
                "min_samples_leaf",
                "Minimum cases per branch",
                help="A split needs two branches with at least this many training cases.",
            ),
            FormParam(
                "probability",
                "Leaf probabilities",
                choice_labels={"laplace": "Laplace-corrected", "frequency": "frequency"},
            ),
        ),
    ),
    "idx": LearnerSpec(
        key="idx",
        label="IDX tree (Norton, gain per unit of price)",
        estimator_class_path="learners.tree.IDXClassifier",
        description="Chooses tests by information gain divided by price.",
        form=_TREE_PARAMS,
    ),
    "csid3": LearnerSpec(
        key="csid3",
        label="CS-ID3 tree (Tan, squared gain per unit of price)",
        estimator_class_path="learners.tree.CSID3Classifier",
        description="Chooses tests by squared information gain divided by price.",
        form=_TREE_PARAMS,
    ),
    "act": LearnerSpec(
        key="act",
        label="ACT anytime cost-sensitive tree (Esmeir & Markovitch)",
        estimator_class_path="learners.act.ACTClassifier",
        description="Looks ahead with sampled trees to lower test plus error cost; more "
        "training time (larger r) finds cheaper trees. Cross-validation on the training "
        "cases then keeps what costs least on held-out cases: one of these trees, a "
        "simpler greedy one (a single test, even), or no test at all. Can be stopped at "
        "any time.",
        anytime=True,
        anytime_param="r",
        form=(
            _LOOKAHEAD_R,
            FormParam(
                "w",
                "Cost weight w (optional)",
                help="EG2's cost emphasis in the sample trees; empty derives it from the costs.",
            ),
            FormParam(
                "cf",
                "Pruning confidence (optional)",
                help="Confidence of the pessimistic error estimate; empty derives it from "
                "the costs.",
            ),
            FormParam(
                "stop_rule",
                "When a branch stops growing",
                choice_labels={
                    "leaf_cost": "when no test beats a leaf's cost",
                    "prune": "grow fully, then prune by cost",
                },
                help="The default stops where no test pays for itself.",
            ),
            FormParam(
                "one_vs_rest",
                "Also split a test one answer against the rest",
                help="For tests with three or more answers: besides one branch per answer, "
                "ACT may set one answer against all others (e.g. chest pain: asymptomatic "
                "or not).",
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
        form=(_LOOKAHEAD_R, _TIME_BUDGET),
    ),
    "icet": LearnerSpec(
        key="icet",
        label="ICET genetic cost-sensitive tree (Turney)",
        estimator_class_path="learners.act.ICETClassifier",
        description="Evolves biased test costs for EG2 over generations; fitness is the true "
        "cost on a held-out half of the training cases.",
        form=(
            FormParam(
                "generations",
                "Generations",
                help="More generations search longer for cheaper trees.",
            ),
            FormParam("population", "Population size", help="Trees per generation."),
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
        form=(
            FormParam(
                "reward",
                "REWARD",
                help="Reward of a correct decision that more tests would not change.",
            ),
            FormParam(
                "penalty",
                "PENALTY",
                help="Penalty of a wrong decision; larger makes it test or refer more.",
            ),
            FormParam(
                "max_subsets",
                "Most test subsets",
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


def takes_matrix_at_prediction(key: str, params: Mapping[str, Any] | None) -> bool:
    """Whether a model of learner ``key`` fitted with ``params`` decides with an error matrix
    given after training (the estimator's ``set_cost_matrix``): plain Boosting, which never
    looks at the matrix while training, so one fit serves every matrix and an edited matrix
    needs no retraining.  Cost-Boosting (``cost_sensitive``) grew its trees for one matrix.
    ValidationError for an unknown learner."""
    cls = get_spec(key).estimator_class()
    if not hasattr(cls, "set_cost_matrix"):
        return False
    return not bool({**cls().get_params(), **(params or {})}.get("cost_sensitive", False))


def clean_params(key: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validated parameters for learner ``key`` (defaults filled in; unknown names rejected)."""
    spec = get_spec(key)
    params = dict(params or {})
    upgrade = getattr(spec.estimator_class(), "_upgrade_params", None)
    if upgrade is not None:
        # a parameter the learner renamed, as stored by an older training (prune -> pruning)
        try:
            params = upgrade(params)
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
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
