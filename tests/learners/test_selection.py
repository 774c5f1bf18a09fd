"""The selector: chooses by held-out cost inside the training data, refits, reports, reloads."""

import json

import numpy as np
import pytest

from learners import CostModel, ModelDocumentError, evaluate, model_from_json
from learners.baselines import OrderNothing
from learners.evaluation import cross_validate
from learners.selection import CANDIDATES, CostSelectedClassifier, FoldCosts, SelectionCandidate
from learners.tree import EG2Classifier

CHEAP = ("order-everything", "eg2", "dtmc")


def _table(seed=0, n=150):
    """x0 decides the class (cheap), x1 is noise (dear), x2 is a noisy copy of x0 (dear)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    X[:, 2] = X[:, 0] + rng.normal(size=n)
    return X, y, CostModel([1.0, 20.0, 20.0])


def _selector(mc, **extra):
    _, _, costs = _table()
    params = dict(
        test_costs=costs,
        cost_matrix=mc * (1 - np.eye(2)),
        random_state=0,
        candidates=CHEAP,
        n_splits=3,
        n_repeats=2,
    )
    params.update(extra)
    return CostSelectedClassifier(**params)


@pytest.fixture(scope="module")
def fitted():
    X, y, _ = _table()
    return _selector(100.0).fit(X, y)


def test_winner_is_the_cheapest_line_of_the_report_and_answers_the_policy(fitted):
    """The winner is the measured candidate of least mean cost; next_action is the refitted
    winner's, and the report holds every requested candidate plus ordering nothing."""
    report = fitted.selection_report_
    assert [line.name for line in report] == ["order-nothing", *CHEAP]
    assert all(isinstance(line, SelectionCandidate) and line.measured for line in report)
    assert fitted.winner_ == min(report, key=lambda line: line.mean_cost)
    assert fitted.winner_.name != "order-nothing"  # x0 at $1 tells the classes apart at mc 100
    X, _, _ = _table()
    assert fitted.next_action({}) == fitted.best_estimator_.next_action({})
    np.testing.assert_array_equal(fitted.predict(X), fitted.best_estimator_.predict(X))


def test_report_costs_are_what_evaluate_charges_on_the_same_folds():
    """A candidate's mean cost is evaluate's mean total cost over the same repeated folds."""
    from sklearn.model_selection import RepeatedStratifiedKFold

    X, y, costs = _table()
    model = _selector(100.0, candidates=("eg2",)).fit(X, y)
    seed = model._random_seed()  # an int random_state gives itself
    folds = RepeatedStratifiedKFold(n_splits=3, n_repeats=2, random_state=seed).split(X, y)
    eg2 = EG2Classifier(test_costs=costs, cost_matrix=100.0 * (1 - np.eye(2)), random_state=0)
    report = cross_validate(eg2, X, y, folds=list(folds))
    line = next(line for line in model.selection_report_ if line.name == "eg2")
    # pooled over both repeats: every case counted twice, like the report's mean
    assert line.mean_cost == pytest.approx(report.overall.mean_total_cost)
    assert line.standard_error > 0 and line.fit_seconds > 0


def test_at_a_tiny_error_cost_ordering_nothing_wins():
    """When an error costs less than the cheapest test, no test pays: the selector orders none."""
    X, y, _ = _table()
    model = _selector(0.5).fit(X, y)
    assert model.winner_.name == "order-nothing"
    assert isinstance(model.best_estimator_, OrderNothing)
    assert evaluate(model, X, y).mean_test_cost == 0.0


def test_time_budget_leaves_out_the_candidates_it_could_not_measure():
    """With a budget already spent, every candidate but ordering nothing is skipped, said so in
    the report, and ordering nothing wins."""
    X, y, _ = _table()
    model = _selector(100.0, time_budget=1e-9).fit(X, y)
    lines = {line.name: line for line in model.selection_report_}
    assert lines["order-nothing"].measured
    for name in CHEAP:
        assert not lines[name].measured
        assert "time budget" in lines[name].note
    assert model.winner_.name == "order-nothing"


def test_a_candidate_that_refuses_the_data_is_left_out_with_the_reason():
    """The conditioned-loss model takes one error cost: under a matrix with two it is not
    measured, and the report says why."""
    X, y, costs = _table()
    model = _selector(
        100.0, cost_matrix=[[0.0, 50.0], [400.0, 0.0]], candidates=("conditioned-loss", "eg2")
    ).fit(X, y)
    line = next(line for line in model.selection_report_ if line.name == "conditioned-loss")
    assert not line.measured and "more than one error cost" in line.note


def test_unknown_candidate_is_refused_with_the_known_names():
    """A misspelt candidate names itself and the known candidates."""
    X, y, _ = _table()
    with pytest.raises(ValueError, match="unknown name.*'eg3'.*known: order-nothing"):
        _selector(100.0, candidates=("eg3",)).fit(X, y)


def test_parallel_folds_give_the_same_choice(fitted):
    """n_jobs=2 (joblib) measures the same costs as one process."""
    X, y, _ = _table()
    parallel = _selector(100.0, n_jobs=2).fit(X, y)
    assert [line.mean_cost for line in parallel.selection_report_] == [
        line.mean_cost for line in fitted.selection_report_
    ]


def test_candidates_measured_one_by_one_elsewhere_give_the_same_choice(fitted):
    """measure_candidate per candidate (as separate workers do, through JSON) then
    fit_measured gives fit's report, winner and refitted policy."""
    X, y, _ = _table()
    names = _selector(100.0).candidates_to_measure(X, y)
    assert names == ("order-nothing", *CHEAP)
    shipped = {
        name: FoldCosts.from_dict(
            json.loads(json.dumps(_selector(100.0).measure_candidate(name, X, y).to_dict()))
        )
        for name in names
    }
    assembled = _selector(100.0).fit_measured(X, y, shipped)

    def costs(model):  # fit times are clock readings and differ from run to run
        return [(c.name, c.mean_cost, c.standard_error, c.note) for c in model.selection_report_]

    assert costs(assembled) == costs(fitted)
    assert assembled.winner_.name == fitted.winner_.name
    assert (
        json.loads(assembled.to_json())["fitted"]["fitted_winner"]
        == (json.loads(fitted.to_json())["fitted"]["fitted_winner"])
    )


def test_fit_measured_refuses_measurements_that_do_not_fit_its_folds():
    """A measurement of a foreign candidate, of another fold count, or none for ordering
    nothing is refused with a message; a missing candidate is reported, not chosen."""
    X, y, _ = _table()
    selector = _selector(100.0)
    nothing = selector.measure_candidate("order-nothing", X, y)
    eg2 = selector.measure_candidate("eg2", X, y)
    with pytest.raises(ValueError, match="not a candidate measured here"):
        selector.fit_measured(X, y, {"order-nothing": nothing, "idx": eg2})
    short = FoldCosts("eg2", eg2.totals[:2], eg2.seconds[:2])
    with pytest.raises(ValueError, match="has 2 folds"):
        selector.fit_measured(X, y, {"order-nothing": nothing, "eg2": short})
    with pytest.raises(ValueError, match="ordering nothing must be measured"):
        selector.fit_measured(X, y, {"eg2": eg2})
    partial = selector.fit_measured(X, y, {"order-nothing": nothing, "eg2": eg2})
    lines = {line.name: line for line in partial.selection_report_}
    assert lines["dtmc"].note == "not measured: no measurement arrived"
    assert partial.winner_.name in {"order-nothing", "eg2"}
    with pytest.raises(ValueError, match="pair up"):
        FoldCosts.from_dict({"name": "eg2", "totals": [1.0], "seconds": [], "refused": ""})
    with pytest.raises(ValueError, match="candidate name"):
        FoldCosts.from_dict({"name": "nope", "totals": [], "seconds": [], "refused": ""})


def test_document_round_trip_and_a_forged_winner_is_refused(fitted):
    """The JSON keeps the report and the winner; a winner that is not the cheapest line, or a
    winner document of other settings than its candidate's, is refused."""
    text = fitted.to_json()
    again = model_from_json(text)
    assert again.selection_report_ == fitted.selection_report_
    assert again.winner_ == fitted.winner_
    assert again.next_action({}) == fitted.next_action({})
    document = json.loads(text)
    others = [line["name"] for line in document["fitted"]["report"]]
    document["fitted"]["winner"] = next(n for n in others if n != fitted.winner_.name)
    with pytest.raises(ModelDocumentError, match="not the report's cheapest"):
        model_from_json(json.dumps(document))
    if fitted.winner_.name.startswith("eg2"):
        document = json.loads(text)
        inner = document["fitted"]["fitted_winner"]["model"]["params"]
        inner["min_samples_leaf"] = 7
        with pytest.raises(ModelDocumentError, match="min_samples_leaf"):
            model_from_json(json.dumps(document))


def test_every_candidate_names_a_registered_learner_or_a_baseline():
    """The grid is declared once, over loadable learners, each name once."""
    from learners.serialization import LEARNERS

    names = [c.name for c in CANDIDATES]
    assert len(set(names)) == len(names)
    for candidate in CANDIDATES:
        assert candidate.learner in LEARNERS or candidate.learner in (
            "OrderNothing",
            "OrderEverything",
        )
        assert candidate.learner != "CostSelectedClassifier"
