"""Which tests the case screen asks for together in one form (each still saved as its own step).

* **Free questions.**  When the advice is a test that costs this patient nothing
  (``CostModel.marginal_cost`` of the model's snapshot is 0, e.g. a history
  question), every other free test the model would ask next is offered with it.
  The model itself says which: its ``next_action`` is asked again with the
  offered tests set aside (as if unknown) until it wants a test that is not free.
  So the form holds exactly the free questions the model uses, in its order.
* **Derived tests.**  A derived test (thyroid FTI from TT4 and T4U) is entered with
  its missing inputs; with a formula in the model's snapshot it is not entered
  at all but computed when they are saved (``services.cases``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .cases import CaseState, TestOption
from .matrices import estimator_for_case

__all__ = ["Computed", "EntryBlock", "computed_formulas", "entry_block"]


@dataclass
class Computed:
    """A derived test the screen computes once the form's values are saved."""

    option: TestOption
    formula: str
    inputs: list[str]


@dataclass
class EntryBlock:
    """The tests of one entry form: ``free`` questions, or a ``derived`` test with its inputs."""

    kind: str
    options: list[TestOption]
    computed: list[Computed] = field(default_factory=list)

    @property
    def is_batch(self) -> bool:
        return len(self.options) > 1


def _free_chain(state: CaseState, first: int, is_free) -> list[int]:
    """The free tests the model asks, in its order, starting with the advised ``first``."""
    estimator = estimator_for_case(state.case)
    asked = [first]
    aside = set(state.unavailable) | {first}
    for _ in range(len(state.test_options)):
        action = estimator.next_action(state.known, aside)
        if action.kind != "extract" or int(action.test) in aside or not is_free(int(action.test)):
            break
        asked.append(int(action.test))
        aside.add(int(action.test))
    return asked


def _missing_inputs(cost_model, index: int, formulas, known) -> list[int]:
    """The inputs of derived test ``index`` still to enter (inputs of derived inputs too)."""
    missing: list[int] = []
    for source in cost_model.derived[index]:
        if source in known:
            continue
        if source in cost_model.derived:
            missing.extend(s for s in _missing_inputs(cost_model, source, formulas, known))
            if source not in formulas:
                missing.append(source)
        else:
            missing.append(source)
    return list(dict.fromkeys(missing))


def entry_block(state: CaseState, entry: TestOption | None) -> EntryBlock | None:
    """The form for ``entry`` (the test the screen asks for), or None for a plain one-test form."""
    if entry is None or not state.is_open:
        return None
    snapshot = state.case.trained_model.snapshot
    cost_model = snapshot.prices
    formulas = snapshot.derived_formulas()
    by_index = {o.test.index: o for o in state.test_options}
    done = frozenset(state.known)
    index = entry.test.index

    def is_open(i: int) -> bool:
        return i in by_index and i not in state.known

    def is_free(i: int) -> bool:
        return (
            is_open(i)
            and i not in state.unavailable
            and i not in cost_model.derived
            and cost_model.marginal_cost(i, done) == 0.0
        )

    def computed(i: int) -> Computed:
        labels = [by_index[s].test.display_label for s in cost_model.derived[i] if s in by_index]
        return Computed(option=by_index[i], formula=formulas[i].text, inputs=labels)

    if index in cost_model.derived:
        fields = _missing_inputs(cost_model, index, formulas, state.known)
        fields = [i for i in fields if is_open(i)]
        if not fields:
            return None  # its inputs are known: typed alone (free), or already computed
        if index in formulas:
            return EntryBlock("derived", [by_index[i] for i in fields], [computed(index)])
        return EntryBlock("derived", [by_index[i] for i in [*fields, index]])
    completes = [
        d
        for d, sources in sorted(cost_model.derived.items())
        if index in sources
        and is_open(d)
        and d not in state.unavailable
        and all(s in state.known or s == index for s in sources)
    ]
    if completes:
        return EntryBlock(
            "derived",
            [entry, *(by_index[d] for d in completes if d not in formulas)],
            [computed(d) for d in completes if d in formulas],
        )
    advice = state.advice
    if entry.recommended and advice and advice.kind == "extract" and is_free(index):
        asked = _free_chain(state, index, is_free)
        if len(asked) > 1:
            return EntryBlock("free", [by_index[i] for i in asked])
    return None


def computed_formulas(state: CaseState) -> dict[int, str]:
    """Test index -> formula text of the tests this case computes (its model's snapshot)."""
    formulas = state.case.trained_model.snapshot.derived_formulas()
    return {index: formula.text for index, formula in formulas.items()}
