"""One-vs-rest splits of nominal tests for any learner, through priced indicator tests.

:func:`with_category_indicators` gives a dataset the indicator tests of
:func:`learners.tree.one_vs_rest.category_indicators` (one 0/1 test per category of each
nominal test with three or more categories, a derived test of its nominal test, so priced
exactly as that test).  ACT makes such splits itself (``one_vs_rest=True``); this lets the
benchmarks give the same choice to every learner, and hide the multiway split
(``keep_multiway=False``: the nominal test's column is blanked, every value missing, as in
pystreed's trees; the test stays as the indicators' priced input).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from datasets.dataset import UCIDataset
from learners.tree.one_vs_rest import category_indicators


def with_category_indicators(data: UCIDataset, *, keep_multiway: bool = True) -> UCIDataset:
    """``data`` with the indicator tests of its nominal tests (see the module docstring);
    ``data`` itself when no nominal test has three or more categories."""
    if data.costs is None:
        raise ValueError(f"{data.name} has no test prices")
    categories = {}
    for f in data.categorical:
        values = data.X[:, f]
        categories[f] = np.unique(values[~np.isnan(values)])
    found = category_indicators(data.X, categories, data.costs)
    if found is None:
        return data
    X = found.X.copy()
    if not keep_multiway:
        X[:, sorted({f for f, _ in found.source})] = np.nan
    names = [f"{data.feature_names[f]} = {code:g}" for f, code in found.source]
    return replace(
        data,
        name=f"{data.name}, one-vs-rest indicators{'' if keep_multiway else ' only'}",
        feature_names=list(data.feature_names) + names,
        categorical=found.categorical,
        X=X,
        costs=found.cost_model,
    )
