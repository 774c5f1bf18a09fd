"""One-vs-rest splits of nominal tests, emulated with priced indicator tests (issue 12).

Our trees split a nominal test one branch per category.  The issue's pystreed peer
splits it one category against the rest.  :func:`with_category_indicators` lets any
learner of ours make that split without changing the tree format, so the two kinds of
split can be measured on the same folds:

For every nominal test with three or more categories, one 0/1 test per category is
appended ("cp = 4"), declared a *derived* test of the nominal test
(``CostModel.derived``).  Its price is therefore exactly the nominal test's marginal
price (group discounts included), doing it makes the nominal test done, and once one
indicator (or the test itself) is known every other indicator of that test is free.
With ``keep_multiway`` (the default) the nominal test stays, so a learner chooses
between the multiway split and any one-vs-rest split.  Without it the nominal test's
column is blanked (every value missing) and only one-vs-rest splits remain, as in
pystreed's trees; the test itself stays as the indicators' priced input.  A missing
value stays missing in every indicator.  Turney's
standard cost (the normalizer) is unchanged, as the indicators add nothing to TC.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from datasets.dataset import UCIDataset
from learners.costs import CostModel

#: nominal tests with fewer categories gain nothing: their multiway split is one-vs-rest
MIN_CATEGORIES = 3


def with_category_indicators(data: UCIDataset, *, keep_multiway: bool = True) -> UCIDataset:
    """``data`` with a derived 0/1 indicator test per category of each nominal test with
    :data:`MIN_CATEGORIES` or more categories (see the module docstring)."""
    costs = data.costs
    if costs is None:
        raise ValueError(f"{data.name} has no test prices")
    if costs.derived:
        # indicators of a derived test would need derived-of-derived pricing checks
        raise ValueError(f"{data.name} already has derived tests")
    names = list(data.feature_names)
    X = data.X.copy()
    columns = [X]
    categorical = list(data.categorical)
    derived: dict[int, tuple[int, ...]] = {}
    full, discounted = costs.costs.tolist(), costs.discounted.tolist()
    groups, delayed = list(costs.groups), costs.delayed.tolist()
    for f in data.categorical:
        values = data.X[:, f]
        known = ~np.isnan(values)
        categories = np.unique(values[known])
        if categories.size < MIN_CATEGORIES:
            continue
        for code in categories:
            indicator = np.where(known, (values == code).astype(float), np.nan)
            derived[len(names)] = (int(f),)
            categorical.append(len(names))
            names.append(f"{data.feature_names[f]} = {code:g}")
            columns.append(indicator[:, None])
            # a derived test's own prices are never charged (it costs its missing inputs)
            full.append(float(costs.costs[f]))
            discounted.append(float(costs.discounted[f]))
            groups.append(None)
            delayed.append(bool(costs.delayed[f]))
        if not keep_multiway:
            X[:, f] = np.nan
    model = CostModel(
        full,
        discounted=discounted,
        groups=groups,
        delayed=delayed,
        derived=derived,
        free=costs.free,
    )
    return replace(
        data,
        name=f"{data.name}, one-vs-rest indicators{'' if keep_multiway else ' only'}",
        feature_names=names,
        categorical=categorical,
        X=np.hstack(columns),
        costs=model,
    )
