"""Loading a model document is safe: a malformed document raises ModelDocumentError,
anything that loads answers in bounded time with valid probabilities."""

import copy
import importlib
import json
import signal
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from learners import ModelDocumentError, model_from_json
from learners.costs import CostModel
from learners.serialization import LEARNERS, decode_value, encode_value
from learners.tree import C45Classifier

FIXTURES = Path(__file__).parent / "fixtures"

#: Settings that keep each learner's fit to a fraction of a second.  A learner
#: missing here is fitted with its defaults (and its own _fast_test_params).
FAST_PARAMS = {
    # Unpruned, so the corruption tests have a tree of several levels with a nominal split.
    "C45Classifier": {"pruning": "none"},
    "ACTClassifier": {"r": 1},
    "LSID3Classifier": {"r": 1},
    "ICETClassifier": {"population": 4, "generations": 1},
    "ConditionedLossClassifier": {"validation_folds": 2, "window_widths": [0.05, 0.5]},
}


def _data():
    """40 cases: two priced numeric tests in a group and a cheap nominal one (codes 0-2)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(40, 3))
    X[:, 2] = rng.integers(0, 3, 40)
    y = np.where(X[:, 0] + 0.7 * X[:, 2] + 0.3 * rng.normal(size=40) > 1.0, "sick", "well")
    X[rng.random(X.shape) < 0.1] = np.nan
    return X, y


def _learner(name):
    return getattr(importlib.import_module(LEARNERS[name]), name)


@cache
def _document_text(name: str) -> str:
    """The JSON document of ``name`` fitted on :func:`_data` (fitted once per run)."""
    cls = _learner(name)
    params = dict(getattr(cls, "_fast_test_params", {}))
    params.update(FAST_PARAMS.get(name, {}))
    params["random_state"] = 0
    params["categorical_features"] = [2]
    params["test_costs"] = CostModel(
        [1.0, 2.0, 0.5], discounted=[1.0, 1.0, 0.5], groups=["blood", "blood", None]
    )
    X, y = _data()
    return cls(**params).fit(X, y).to_json()


def _document(name: str = "C45Classifier") -> dict:
    return json.loads(_document_text(name))


def _refused(document, match: str) -> ModelDocumentError:
    text = document if isinstance(document, str) else json.dumps(document)
    with pytest.raises(ModelDocumentError, match=match) as caught:
        model_from_json(text)
    return caught.value


def _internal_nodes(tree: dict) -> list[int]:
    return [n for n, f in enumerate(tree["feature"]) if f >= 0]


def _edges(tree: dict, node: int) -> range:
    start = tree["edge_start"][node]
    return range(start, start + tree["n_edges"][node])


# --------------------------------------------------------------- the real documents
@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_every_learner_reloads_its_own_document(name):
    """Each registered learner's document loads back to the same probabilities and policy."""
    model = model_from_json(_document_text(name))
    again = model_from_json(model.to_json())
    X, _ = _data()
    np.testing.assert_array_equal(again.predict_proba(X[:8]), model.predict_proba(X[:8]))
    assert again.next_action({}) == model.next_action({})


@pytest.mark.parametrize(
    "name", sorted(json.loads((FIXTURES / "model_documents_v1.json").read_text()))
)
def test_version_1_documents_written_before_validation_still_load(name):
    """Documents saved by the library before loading was checked (commit 77e1375) still load."""
    stored = json.loads((FIXTURES / "model_documents_v1.json").read_text())[name]
    model = model_from_json(json.dumps(stored))
    X, _ = _data()
    proba = model.predict_proba(X[:8])
    assert type(model).__name__ == name
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


# ------------------------------------------------------------- tree corruptions
def test_node_that_is_its_own_child_is_refused():
    """A node listing itself as a child (a walk would never end) is named in the error."""
    document = _document()
    tree = document["fitted"]["tree"]
    node = _internal_nodes(tree)[-1]
    tree["child"][_edges(tree, node)[0]] = node
    _refused(document, rf"node {node} is its own child \(a cycle\)")


def test_edge_back_to_an_ancestor_is_refused_as_a_possible_cycle():
    """A child pointing back up the tree (a cycle) is refused: children come after parents."""
    document = _document()
    tree = document["fitted"]["tree"]
    deeper = [n for n in _internal_nodes(tree) if n > 0][0]
    tree["child"][_edges(tree, deeper)[0]] = 1 if deeper > 1 else 0
    _refused(document, "numbered before it.*cycle|its own child")


def test_unreachable_node_is_refused():
    """Two edges leading to one node leave another node with no parent: refused, named."""
    document = _document()
    tree = document["fitted"]["tree"]
    first, second = _edges(tree, 0)[:2]
    orphan = tree["child"][second]
    tree["child"][second] = tree["child"][first]
    _refused(document, f"node {orphan} is unreachable")


def test_feature_out_of_range_is_refused():
    """A node testing a feature the model does not have names the node and the range."""
    document = _document()
    document["fitted"]["tree"]["feature"][0] = 3
    _refused(document, "node 0 tests feature 3, out of range for 3 features")


def test_edge_start_far_out_of_range_is_refused():
    """edge_start = 10000 is refused, naming the field."""
    document = _document()
    document["fitted"]["tree"]["edge_start"][0] = 10000
    _refused(document, r"fitted\.tree\.edge_start\[0\]: 10000 is out of range")


def test_overlapping_edges_are_refused():
    """A node whose edges start inside another node's edges is refused."""
    document = _document()
    tree = document["fitted"]["tree"]
    node = _internal_nodes(tree)[1]
    tree["edge_start"][node] -= 1
    _refused(document, f"node {node} has edge_start .* each node's edges follow")


def test_huge_n_features_in_is_refused():
    """n_features_in = 10^12 is refused with the allowed range."""
    document = _document()
    document["fitted"]["n_features_in"] = 10**12
    _refused(document, r"fitted\.n_features_in: 1000000000000 is out of range: expected 1 to")


def test_negative_class_weight_is_refused():
    """A negative class weight (it would give negative probabilities) is refused."""
    document = _document()
    document["fitted"]["tree"]["class_weight"][1][0] = -5.0
    _refused(document, r"class_weight\[1\]\[0\]: -5.0 is below 0")


def test_branch_weights_not_summing_to_one_are_refused():
    """Branch shares of a node must sum to 1, or a missing value would lose the patient."""
    document = _document()
    tree = document["fitted"]["tree"]
    for edge in _edges(tree, 0):
        tree["branch_weight"][edge] = 0.0
    _refused(document, "branch weights of node 0 sum to 0, not 1")


def test_nominal_split_must_cover_the_category_codes():
    """A nominal split whose codes differ from the feature's categories is refused."""
    document = _document()
    tree = document["fitted"]["tree"]
    nominal = [n for n in _internal_nodes(tree) if tree["threshold"][n] is None]
    assert nominal, "the fixture's tree should split the nominal feature"
    tree["branch_value"][_edges(tree, nominal[0])[0]] = 7.0
    _refused(document, f"node {nominal[0]} splits feature 2 on the codes")


@pytest.mark.parametrize(
    "where, key",
    [(("fitted", "tree"), "child"), (("fitted",), "classes"), ((), "fitted"), ((), "learner")],
)
def test_missing_key_is_named(where, key):
    """A missing field raises ModelDocumentError naming it (never KeyError)."""
    document = _document()
    parent = document
    for step in where:
        parent = parent[step]
    del parent[key]
    _refused(document, f"missing field '{key}'")


@pytest.mark.parametrize(
    "path, value, match",
    [
        (("fitted", "tree", "feature"), "x", r"tree\.feature: expected a list, got a string"),
        (("fitted", "tree", "threshold", 0), [1], r"threshold\[0\]: expected a number"),
        (("fitted", "tree", "child", 0), 1.5, r"child\[0\]: expected a whole number"),
        (("fitted", "classes"), {"a": 1}, r"fitted\.classes: expected a list, got an object"),
        (("fitted", "cost_matrix", 0, 1), "1", r"cost_matrix\[0\]\[1\]: expected a number"),
        (("fitted", "reject_cost"), -1, r"reject_cost: -1.0 is out of range"),
        (("fitted", "categories"), [], r"categories: expected an object"),
        (("params", "probability"), 5, "probability"),
    ],
)
def test_wrong_type_is_named(path, value, match):
    """A field of the wrong type or range raises ModelDocumentError naming the field."""
    document = _document()
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    _refused(document, match)


# --------------------------------------------------------- document-level checks
@pytest.mark.parametrize("version", [2, 0, "1", True, None])
def test_unsupported_version_is_refused(version):
    """Only version 1 documents load; any other version value says which versions are read."""
    document = _document()
    document["version"] = version
    _refused(document, "unsupported model document version .*reads version 1")


@pytest.mark.parametrize(
    "token, match",
    [
        ("NaN", "NaN, which is not JSON"),
        ("-Infinity", "-Infinity, which is not JSON"),
        ("1e999", "too large for a float"),
        ("1" * 5000, "integer of 5000 digits"),
    ],
)
def test_non_json_numbers_are_refused(token, match):
    """NaN, infinities, float overflow and 5000-digit integers never reach the loaders."""
    text = _document_text("C45Classifier").replace('"n_features_in":3', f'"n_features_in":{token}')
    assert token in text
    _refused(text, match)


def test_deep_nesting_is_refused_not_a_recursion_error():
    """A document nested 100000 deep raises ModelDocumentError, not RecursionError."""
    _refused('{"format": "learners-model", "version": 1, "params": ' + "[" * 100_000, "nested")


def test_invalid_json_is_refused():
    """Text that is not JSON raises ModelDocumentError."""
    _refused('{"format": "learners-model", ', "not valid JSON")


def test_unknown_parameter_is_refused_with_the_learner_parameters():
    """A parameter the learner does not take is named (not a TypeError from the constructor)."""
    document = _document()
    document["params"]["shell"] = "rm -rf /"
    _refused(document, "C45Classifier takes no parameter 'shell'")


@pytest.mark.parametrize("learner", [["C45Classifier"], "builtins.eval", "SerializableMixin"])
def test_learner_outside_the_registry_is_refused(learner):
    """Only names of the closed LEARNERS registry load; nothing else is imported."""
    document = _document()
    document["learner"] = learner
    _refused(document, "unknown learner")


def test_parameter_object_of_unknown_kind_is_refused():
    """A parameter object that is none of the encoded forms (e.g. a pickle hook) is refused."""
    document = _document()
    document["params"]["test_costs"] = {"__reduce__": ["os.system", ["true"]]}
    _refused(document, r"params\.test_costs: unexpected object")


def test_derived_cycle_in_a_stored_cost_model_is_refused():
    """A stored cost model whose derived tests form a cycle is refused at load."""
    document = _document()
    document["fitted"]["cost_model"]["derived"] = {"0": [1], "1": [0]}
    _refused(document, r"fitted\.cost_model: derived features form a cycle: 0 -> 1 -> 0")


def test_cost_model_of_another_size_is_refused():
    """The stored cost model must price exactly n_features_in tests."""
    document = _document()
    model = document["fitted"]["cost_model"]
    for key in ("costs", "discounted", "groups", "delayed"):
        model[key] = model[key][:2]
    _refused(document, "has 2 tests but the model has 3 features")


# ------------------------------------------------------- learner-specific state
def test_act_cf_out_of_range_is_refused():
    """ACT's stored cf must lie in [0, 1]."""
    document = _document("ACTClassifier")
    document["fitted"]["cf"] = 2.5
    _refused(document, r"fitted\.cf: 2.5 is out of range")


def test_icet_biased_costs_of_another_length_are_refused():
    """ICET keeps one biased price per feature."""
    document = _document("ICETClassifier")
    document["fitted"]["biased_costs"].append(1.0)
    _refused(document, r"fitted\.biased_costs: has 4 entries, expected 3")


def test_conditioned_loss_tree_count_must_match_the_states():
    """The conditioned-loss model needs one tree per state (2^m for m priced tests)."""
    document = _document("ConditionedLossClassifier")
    document["fitted"]["trees"].pop()
    _refused(document, "priced tests, so 2\\^3 states, but the document has 7 trees")


def test_conditioned_loss_tree_cannot_test_a_feature_its_state_lacks():
    """The tree of the empty state (nothing bought) may only test free features."""
    document = _document("ConditionedLossClassifier")
    trees = document["fitted"]["trees"]
    trees[0] = copy.deepcopy(trees[-1])
    assert any(f >= 0 for f in trees[0]["feature"]), "the full-state tree should split"
    _refused(document, r"fitted\.trees\[0\] tests feature")


def test_conditioned_loss_window_width_must_be_positive():
    """A zero window width is refused."""
    document = _document("ConditionedLossClassifier")
    document["fitted"]["window_width"][0] = 0.0
    _refused(document, "widths must be positive")


def test_conditioned_loss_training_rows_must_be_equally_long():
    """A ragged training matrix is refused, naming the row."""
    document = _document("ConditionedLossClassifier")
    document["fitted"]["X_train"][3].append(1.0)
    _refused(document, r"X_train\[3\]: has 4 entries, expected 3")


# ------------------------------------------------------------ random generators
def test_model_fitted_with_a_random_state_instance_round_trips():
    """random_state=RandomState(...) is saved as its MT19937 state and restored exactly."""
    X, y = _data()
    model = C45Classifier(random_state=np.random.RandomState(3)).fit(X, y)
    again = model_from_json(model.to_json())
    restored = again.get_params()["random_state"]
    assert isinstance(restored, np.random.RandomState)
    assert restored.randint(0, 2**31 - 1) == model.random_state.randint(0, 2**31 - 1)


@pytest.mark.parametrize("bit_generator", ["PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"])
def test_generator_parameter_round_trips_through_plain_json(bit_generator):
    """A Generator's bit-generator state survives JSON and gives the same draws."""
    rng = np.random.Generator(getattr(np.random, bit_generator)(11))
    rng.random(5)
    again = decode_value(json.loads(json.dumps(encode_value(rng))))
    assert isinstance(again, np.random.Generator)
    np.testing.assert_array_equal(again.random(4), rng.random(4))


@pytest.mark.parametrize(
    "corrupt, match",
    [
        (lambda s: s["state"].update(key=s["state"]["key"][:5]), "has 5 entries, expected 624"),
        (lambda s: s["state"].update(pos=-1), r"pos: -1 is out of range"),
        (lambda s: s.update(bit_generator="os.system"), "expected 'MT19937'"),
        (lambda s: s.update(gauss="x"), r"gauss: expected a number"),
    ],
)
def test_malformed_random_state_is_refused(corrupt, match):
    """A RandomState encoding with a wrong field is refused, naming it."""
    encoded = encode_value(np.random.RandomState(0))
    corrupt(encoded["__random_state__"])
    with pytest.raises(ModelDocumentError, match=match):
        decode_value(json.loads(json.dumps(encoded)))


def test_generator_naming_an_unknown_bit_generator_is_refused():
    """Only the listed numpy bit generators are restored; another name is refused."""
    encoded = encode_value(np.random.default_rng(0))
    encoded["__generator__"]["bit_generator"] = "builtins.exec"
    with pytest.raises(ModelDocumentError, match="expected one of PCG64"):
        decode_value(encoded)


# ------------------------------------------------------------------ fuzzing
#: Seconds any one load or prediction may take (a healthy one takes milliseconds).
TIME_LIMIT = 10.0


@contextmanager
def time_limit(seconds: float):
    """Raise TimeoutError in this (main) thread when the block runs longer than ``seconds``."""

    def expire(signum, frame):
        raise TimeoutError(f"took more than {seconds} s: a walk that never ends?")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _paths(value, prefix=()):
    """Every path into a JSON value (containers included), root excluded."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, child in items:
        yield (*prefix, key)
        yield from _paths(child, (*prefix, key))


@cache
def _all_paths(name: str) -> tuple:
    return tuple(_paths(_document(name)))


#: The raw-token corruption writes this string, then swaps it for a non-JSON token.
_RAW = "@@raw-token@@"

CORRUPTIONS = st.one_of(
    st.tuples(st.just("replace"), st.sampled_from([None, True, "x", [], {}, [1], {"a": 1}, 0.5])),
    st.tuples(
        st.just("replace"),
        st.sampled_from([0, -1, 1, 2, 10**12, -(10**12), 2**63, 10**30, 1e308, -1e308, -0.5]),
    ),
    st.tuples(st.just("replace"), st.sampled_from(["NaN", "nan", "Infinity", "inf", "-inf"])),
    st.tuples(st.just("raw"), st.sampled_from(["NaN", "-Infinity", "1e999", "9" * 400])),
    st.tuples(st.just("self"), st.none()),
    st.tuples(st.just("shift"), st.sampled_from([-1, 1])),
    st.tuples(st.just("delete"), st.none()),
    st.tuples(st.just("duplicate"), st.none()),
)


def _corrupt(document: dict, path: tuple, kind: str, argument) -> str:
    """``document`` as JSON text with one corruption at ``path``."""
    document = copy.deepcopy(document)
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    key = path[-1]
    value = parent[key]
    if kind == "replace":
        parent[key] = argument
    elif kind == "raw":
        parent[key] = _RAW
    elif kind == "self":
        # An index pointing at itself: a node its own child, an edge its own start.
        parent[key] = key if isinstance(key, int) else len(parent)
    elif kind == "shift":
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        parent[key] = value + argument if number else argument
    elif kind == "delete":
        del parent[key]
    elif kind == "duplicate":
        if isinstance(parent, list):
            parent.insert(key, copy.deepcopy(value))
        else:
            parent[key] = [value, copy.deepcopy(value)]
    text = json.dumps(document)
    return text.replace(f'"{_RAW}"', argument) if kind == "raw" else text


def _query_rows(model) -> np.ndarray:
    """A few training rows shaped for ``model``: its number of features, and nominal
    values drawn from the codes it declares (a code it never saw is a bad input, not
    a broken model)."""
    X, _ = _data()
    n = int(model.n_features_in_)
    rows = np.full((6, n), np.nan)
    rows[:, : min(n, X.shape[1])] = X[:6, : min(n, X.shape[1])]
    for f, codes in getattr(model, "categories_", {}).items():
        column = rows[:, f]
        unseen = ~np.isnan(column) & ~np.isin(column, codes)
        column[unseen] = codes[0]
    return rows


def _check_answers(model) -> None:
    """The loaded model predicts and advises within the time limit, with valid probabilities."""
    rows = _query_rows(model)
    with time_limit(TIME_LIMIT):
        proba = np.asarray(model.predict_proba(rows), dtype=float)
        model.predict(rows)
        actions = [model.next_action({})]
        for row in rows[:3]:
            known = {f: float(v) for f, v in enumerate(row) if v == v}
            actions.append(model.next_action(known))
            actions.append(model.next_action({}, unavailable=range(model.n_features_in_)))
    assert proba.shape == (rows.shape[0], len(model.classes_))
    assert np.isfinite(proba).all() and (proba >= 0).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-9)
    for action in actions:
        belief = np.asarray(action.evidence.proba, dtype=float)
        assert np.isfinite(belief).all() and (belief >= 0).all()
        assert belief.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("name", sorted(LEARNERS))
@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_corrupted_document_is_refused_or_gives_a_working_model(name, data):
    """One random corruption of a real document: ModelDocumentError, or a model that answers
    predict / next_action in bounded time with finite probabilities summing to 1."""
    document = _document(name)
    path = data.draw(st.sampled_from(_all_paths(name)), label="path")
    kind, argument = data.draw(CORRUPTIONS, label="corruption")
    text = _corrupt(document, path, kind, argument)
    try:
        with time_limit(TIME_LIMIT):
            model = model_from_json(text)
    except ModelDocumentError:
        event("refused")
        return
    event("loaded")
    _check_answers(model)
