"""The words of a split patient's branches, a one-vs-rest split's "other" edge included."""

from diagnosis.catalog.models import DiagnosticTest
from diagnosis.clinic.selectors.advice_context import branch_rows, edge_label
from learners.tree import TreeStructure

KINDS = ["typical", "atypical", "non-anginal", "asymptomatic"]


def _chest_pain() -> DiagnosticTest:
    choices = [{"code": c, "label": k} for c, k in enumerate(KINDS)]
    return DiagnosticTest(name="cp", label="Chest pain", kind="nominal", choices=choices)


def _one_vs_rest() -> TreeStructure:
    """Chest pain: asymptomatic (code 3) to node 1, any other to node 2."""
    return TreeStructure(
        feature=[0, -1, -1],
        threshold=[float("nan")] * 3,
        edge_start=[0, 2, 2],
        n_edges=[2, 0, 0],
        class_weight=[[5, 5], [1, 4], [4, 1]],
        child=[1, 2],
        branch_value=[3.0, float("nan")],
        branch_weight=[0.4, 0.6],
    )


def test_a_patient_split_by_a_one_vs_rest_test_reads_the_answer_and_not_it():
    """Chest pain unavailable: 60% "Chest pain ≠ asymptomatic", 40% "= asymptomatic"."""
    rows = branch_rows(_one_vs_rest(), [(1, 0.4), (2, 0.6)], {}, {0: _chest_pain()}, ["no", "yes"])
    assert [row.conditions for row in rows] == [
        ("Chest pain ≠ asymptomatic",),
        ("Chest pain = asymptomatic",),
    ]


def test_the_diagram_names_the_other_edge_by_what_it_is_not():
    """The drawn branch labels: "asymptomatic" and "not asymptomatic"."""
    tree, test = _one_vs_rest(), _chest_pain()
    assert [edge_label(tree, 0, e, test) for e in (0, 1)] == [
        "asymptomatic",
        "not asymptomatic",
    ]
