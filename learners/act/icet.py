"""ICET (Turney 1995): a genetic search for the test costs EG2 should believe.

An individual is a vector of biased test costs plus EG2's ``w`` and the
pruning confidence ``CF``.  Its fitness is the average TRUE total cost (test
costs in context plus misclassification) of the pruned EG2 tree grown with
those biases on a random half of the training data, measured on the other
half.  The population is seeded with the true costs.  The final tree is EG2
grown on all the training data with the best individual; it is priced with
the true costs at prediction time.

The fitness scores the tree ICET ships.  It is grown by the compiled builder
(:func:`._engine.fitness`), which is the tree package's EG2 to the bit: the
same ranking key (EG2's formula at every cost, no zero-cost tier), the same
threshold sweep, leaf label and C4.5 error-based pruning; held-out cases run
through the tree's own policy and are charged as
:func:`learners.evaluation.evaluate` charges them (tests in context, a
missing result split over the branches, referral where ``decide`` refers).
Both prune with the EXACT binomial ``EE`` (:mod:`learners.tree.pessimistic`,
one compiled function), not C4.5's normal approximation: the shipped
:class:`~learners.tree.EG2Classifier` prunes with the exact limit, and a
fitness computed with another ``EE`` would score a different tree.
``tests/learners/test_icet.py`` checks tree and fitness against
``EG2Classifier`` and ``evaluate``.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval

from .. import _document as document
from .._estimator import CostSensitiveClassifier, constraints
from ..costs import CostModel
from ..serialization import SerializableMixin
from ..tree import TREE_SHAPE_RULES, EG2Classifier, TreePolicyMixin
from ..tree._builder import GrowingTree
from ..tree._kernels import MODE_INFORMATION, SplitRule
from . import _engine as engine
from ._encoding import encode_data, encode_prices

__all__ = ["ICETClassifier"]

_CF_RANGE = (0.01, 0.5)
#: ``coeff`` telling the engine to use the exact binomial EE (the tree package's)
_EXACT_EE = -1.0


class ICETClassifier(TreePolicyMixin, SerializableMixin, CostSensitiveClassifier):
    """ICET: EG2 with test costs, ``w`` and ``CF`` tuned by a genetic algorithm.

    By design its trees are EG2's, which buy a test whenever one has information gain
    (only pruning stops them): when an error costs less than the tests, it can cost
    more than ordering nothing.

    Parameters
    ----------
    test_costs, cost_matrix, reject_cost, categorical_features
        As for every learner; ``test_costs`` are the TRUE prices (used for
        the fitness and by the fitted policy).
    random_state : int, RandomState, Generator or None
        Seeds the half split, the initial population and the operators.
    population : int, default 50
    generations : int, default 20
        The anytime knob: ``population * (generations + 1)`` fitness
        evaluations (about 1000 by default, as in Turney's experiments).
    crossover : float, default 0.6
        Probability that two parents exchange genes (uniform crossover).
    mutation : float, optional
        Per-gene mutation probability; None means ``1 / genome length``.
    min_samples_leaf : float, default 2
    probability : {"laplace", "frequency"}, default "laplace"
    progress_callback : callable(fraction, message), optional
        Called after each generation.  Not serialized.

    Attributes
    ----------
    tree_ : TreeStructure
        EG2's tree grown with ``biased_costs_``, ``w_`` and ``cf_``.
    biased_costs_ : ndarray
        The best individual's test costs.
    w_, cf_ : float
    best_fitness_ : float
        Its fitness (average true cost per case on the held-out half).
    fitness_history_ : list of float
        Best fitness after each generation (index 0: the initial population).
    classes_, n_features_in_, cost_model_, cost_matrix_, reject_cost_, categories_
        As for every learner; ``cost_model_`` holds the true prices.
    """

    _parameter_constraints = constraints(
        CostSensitiveClassifier._parameter_constraints,
        random_state=["random_state", np.random.Generator],
        population=[Interval(Integral, 2, None, closed="left")],
        generations=[Interval(Integral, 0, None, closed="left")],
        crossover=[Interval(Real, 0, 1, closed="both")],
        mutation=[Interval(Real, 0, 1, closed="both"), None],
        min_samples_leaf=TREE_SHAPE_RULES["min_samples_leaf"],
        probability=TREE_SHAPE_RULES["probability"],
        progress_callback=[callable, None],
    )

    _fast_test_params = {"population": 4, "generations": 1, "random_state": 0}

    def __init__(
        self,
        *,
        test_costs=None,
        cost_matrix=None,
        reject_cost=None,
        categorical_features=None,
        random_state=None,
        population=50,
        generations=20,
        crossover=0.6,
        mutation=None,
        min_samples_leaf=2,
        probability="laplace",
        progress_callback=None,
    ):
        self.test_costs = test_costs
        self.cost_matrix = cost_matrix
        self.reject_cost = reject_cost
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.population = population
        self.generations = generations
        self.crossover = crossover
        self.mutation = mutation
        self.min_samples_leaf = min_samples_leaf
        self.probability = probability
        self.progress_callback = progress_callback

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Search the biases on halves of ``(X, y)``, then grow EG2 on all of it.

        Raises
        ------
        ValueError
            On malformed input or parameters.
        """
        X, y_codes = self._validate_fit_input(X, y)
        rng = np.random.default_rng(self._random_seed())
        search = _Search(self, X, y_codes.astype(np.int64), rng)
        genome, fitness, history = search.run()
        self.biased_costs_, self.w_, self.cf_ = search.decode(genome)
        self.best_fitness_ = float(fitness)
        self.fitness_history_ = [float(v) for v in history]
        final = EG2Classifier(
            test_costs=_biased_model(self.cost_model_, self.biased_costs_),
            cost_matrix=self.cost_matrix_,
            reject_cost=self.reject_cost_,
            categorical_features=self.categorical_features,
            min_samples_leaf=self.min_samples_leaf,
            cf=self.cf_,
            pruning="error",
            probability=self.probability,
            w=self.w_,
        ).fit(X, y)
        self.tree_ = final.tree_
        self._refresh_caches()  # built now so that prediction never changes __dict__
        if self.progress_callback is not None:
            self.progress_callback(1.0, f"best fitness {self.best_fitness_:.4g}")
        return self

    def _fitted_state(self) -> dict:
        state = super()._fitted_state()
        state["biased_costs"] = self.biased_costs_.tolist()
        state["w"] = float(self.w_)
        state["cf"] = float(self.cf_)
        state["best_fitness"] = float(self.best_fitness_)
        state["fitness_history"] = list(self.fitness_history_)
        return state

    def _load_fitted_state(self, state: dict) -> None:
        """The tree's state (checked by :class:`TreePolicyMixin`) plus the search's
        result: one non-negative biased price per feature, w, cf, the fitnesses;
        else ModelDocumentError."""
        super()._load_fitted_state(state)
        where = "fitted"
        self.biased_costs_ = document.read(
            state, "biased_costs", where, document.numbers, length=self.n_features_in_, low=0.0
        )
        self.w_ = document.read(state, "w", where, document.number, low=0.0)
        self.cf_ = document.read(state, "cf", where, document.number, low=0.0, high=1.0)
        self.best_fitness_ = document.read(state, "best_fitness", where, document.number)
        self.fitness_history_ = document.read(
            state, "fitness_history", where, document.numbers
        ).tolist()


def _biased_model(true_model: CostModel, costs: np.ndarray) -> CostModel:
    """The true model's structure (groups, derived, free) with other full prices."""
    full = true_model.costs
    ratio = np.divide(true_model.discounted, full, out=np.ones_like(full), where=full > 0)
    return CostModel(
        costs,
        discounted=np.asarray(costs) * ratio,
        groups=true_model.groups,
        delayed=true_model.delayed,
        derived=true_model.derived,
        free=true_model.free,
    )


def _recorded_tree(rec, data, n_classes: int):
    """The engine's recorded tree (preorder) as the tree package's structure."""
    feature, boundary, upper, parents, shares, weights, empties, size = rec
    tree = GrowingTree(n_classes)
    for v in range(int(size[0])):
        tree.add(weights[v].copy(), empty=bool(empties[v]))
        f = int(feature[v])
        if f >= 0:
            tree.feature[v] = f
            tree.threshold[v] = (
                np.nan if data.nominal[f] else data.threshold(f, int(boundary[v]), int(upper[v]))
            )
        if v > 0:
            parent = int(parents[v])
            split = tree.feature[parent]
            b = len(tree.edges[parent])
            value = float(data.values[split][b]) if data.nominal[split] else np.nan
            tree.edges[parent].append((v, value, float(shares[v])))
    return tree.to_structure()


class _Search:
    """Real-coded genetic algorithm over ``[log biased costs..., w, cf]``."""

    def __init__(self, model: ICETClassifier, X, y, rng):
        self.model = model
        self.rng = rng
        self.y = y
        self.data = encode_data(X, model.categories_)
        self.ranked = engine.Ranked(self.data.ranks, y, self.data.nominal, self.data.n_values)
        self.rule = SplitRule(
            MODE_INFORMATION,
            np.empty((0, 0)),
            float(model.min_samples_leaf),
            engine.xlogx_table(max(X.shape[0], 1)),
        )
        self.true_prices = encode_prices(model.cost_model_)
        # distinct values per feature, padded: the engine's walk places thresholds with them
        values = np.full((X.shape[1], int(max(self.data.n_values.max(), 1))), np.inf)
        for f, distinct in enumerate(self.data.values):
            values[f, : distinct.size] = distinct
        self.values = values
        n_classes = model.cost_matrix_.shape[0]
        self.reject = (
            np.empty(0)
            if model.reject_cost_ is None
            else np.broadcast_to(np.asarray(model.reject_cost_, dtype=float), (n_classes,)).copy()
        )
        self.n_tests = X.shape[1]
        order = rng.permutation(X.shape[0])
        half = X.shape[0] // 2
        self.train = np.sort(order[:half]).astype(np.int64)
        self.test = np.sort(order[half:]).astype(np.int64)
        # a test's cost floor keeps log-costs finite; free tests stay free anyway
        self.scale = np.maximum(model.cost_model_.costs, 1e-3)

    def decode(self, genome) -> tuple[np.ndarray, float, float]:
        costs = np.exp(genome[: self.n_tests])
        free = np.asarray(self.model.cost_model_.costs) <= 0
        costs[free] = 0.0
        w = float(np.clip(genome[self.n_tests], 0.0, 1.0))
        cf = float(np.clip(genome[self.n_tests + 1], *_CF_RANGE))
        return costs, w, cf

    def fitness(self, genome) -> float:
        """Mean true cost per case on the test half of the genome's EG2 tree.

        The tree is grown on the train half.
        """
        costs, growth = self._grown_with(genome)
        return float(
            engine.fitness(
                self.ranked, self.values, self.train, self.test, costs, self.reject, growth
            )
        )

    def tree(self, genome):
        """The tree :meth:`fitness` scores, as a :class:`~learners.tree.TreeStructure`."""
        costs, growth = self._grown_with(genome)
        rec = engine.grow_eg2(self.ranked, self.train, costs, growth)
        return _recorded_tree(rec, self.data, self.model.cost_matrix_.shape[0])

    def _grown_with(self, genome) -> tuple[engine.Costs, engine.Growth]:
        """The engine's prices (the genome's biased ones to grow, the true ones to charge)
        and settings (the tree package's EG2: error-based pruning, no depth limit)."""
        costs, w, cf = self.decode(genome)
        select = encode_prices(_biased_model(self.model.cost_model_, costs))
        growth = engine.Growth(
            rule=self.rule,
            w=w,
            prune=engine.PRUNE_ERROR,
            coeff=_EXACT_EE,
            cf=cf,
            laplace=self.model.probability == "laplace",
            max_depth=engine.UNLIMITED_DEPTH,
        )
        return engine.Costs(select, self.true_prices, self.model.cost_matrix_), growth

    def run(self):
        m = self.model
        n_genes = self.n_tests + 2
        size = int(m.population)
        seed = np.concatenate([np.log(self.scale), [1.0, 0.25]])
        population = np.empty((size, n_genes))
        population[0] = seed
        # the rest spread two orders of magnitude around the true costs
        population[1:, : self.n_tests] = np.log(self.scale) + self.rng.uniform(
            -np.log(100.0), np.log(100.0), size=(size - 1, self.n_tests)
        )
        population[1:, self.n_tests] = self.rng.uniform(0.0, 1.0, size - 1)
        population[1:, self.n_tests + 1] = self.rng.uniform(*_CF_RANGE, size - 1)
        scores = np.array([self.fitness(g) for g in population])
        history = [float(scores.min())]
        mutation = m.mutation if m.mutation is not None else 1.0 / n_genes
        for generation in range(int(m.generations)):
            elite = population[int(np.argmin(scores))].copy()
            children = [elite]
            while len(children) < size:
                a = self._tournament(population, scores)
                b = self._tournament(population, scores)
                if self.rng.random() < m.crossover:
                    mask = self.rng.random(n_genes) < 0.5
                    a, b = np.where(mask, a, b), np.where(mask, b, a)
                children.extend(self._mutate(c, mutation) for c in (a, b))
            population = np.array(children[:size])
            scores = np.concatenate([[scores.min()], [self.fitness(g) for g in population[1:]]])
            history.append(float(scores.min()))
            if m.progress_callback is not None:
                m.progress_callback(
                    (generation + 1) / (m.generations + 1),
                    f"generation {generation + 1}: best fitness {scores.min():.4g}",
                )
        best = int(np.argmin(scores))  # ties: the earliest, so the elite first
        return population[best], scores[best], history

    def _tournament(self, population, scores):
        i, j = self.rng.integers(0, len(population), size=2)
        return population[i if scores[i] <= scores[j] else j].copy()

    def _mutate(self, genome, rate):
        genome = genome.copy()
        hit = self.rng.random(genome.shape[0]) < rate
        noise = self.rng.normal(size=genome.shape[0])
        genome[: self.n_tests] += np.where(hit[: self.n_tests], noise[: self.n_tests], 0.0)
        if hit[self.n_tests]:
            genome[self.n_tests] = np.clip(genome[self.n_tests] + 0.2 * noise[self.n_tests], 0, 1)
        if hit[self.n_tests + 1]:
            genome[self.n_tests + 1] = np.clip(
                genome[self.n_tests + 1] + 0.05 * noise[self.n_tests + 1], *_CF_RANGE
            )
        return genome
