"""Every advice text on every demo model: each sum, difference and count it states checks.

The demo models (``load_demo_data``'s ``DEMO_LEARNERS``) are loaded from their validated
fixtures (``fixtures/demo_models``), exactly as ``bin/run`` serves them.  Patients are walked by the
advice, some with the advised test marked unavailable (the branch texts), and every
sentence the explanation writes is read back and its arithmetic redone from the
figures it shows.
"""

from __future__ import annotations

import math
import os
import re
import time

import pytest
from django.core.management import call_command

from diagnosis.catalog.models import Dataset
from diagnosis.clinic.selectors.cases import case_state
from diagnosis.clinic.selectors.explanations import patients
from diagnosis.clinic.services import cases
from diagnosis.clinic.services import step as step_service
from diagnosis.management import demo_data
from diagnosis.management.commands.load_demo_data import DEMO_LEARNERS
from diagnosis.training.models import TrainedModel

MONEY = r"(−?\$[\d,]+\.\d\d)"
PERCENT = r"(\d+\.\d)%"


def dollars(text: str) -> float:
    negative = text.startswith("−")
    value = float(text.lstrip("−").lstrip("$").replace(",", ""))
    return -value if negative else value


def count(text: str) -> int:
    return int(text.replace(",", ""))


def check_sentences(advice: dict, why: list[str], branches: list[str], seen: set[str]) -> None:
    """Redo the arithmetic of each sentence from the figures it names; ``seen`` collects which
    kinds of sentence were checked."""
    text = " ".join(why)
    for sentence in why:
        saving = re.search(
            rf"would cost {MONEY} in expect\w+( errors)?; once .+ is known it expects {MONEY}, "
            rf"so the result is expected to save {MONEY}, (at no charge|more than its price of "
            rf"{MONEY}|less than its price of {MONEY})",
            sentence,
        )
        if saving:
            now, after, saved = (dollars(saving.group(i)) for i in (1, 3, 4))
            assert round(now - after, 2) == saved, sentence
            if saving.group(6):
                assert saved > dollars(saving.group(6)), sentence
            if saving.group(7):
                assert saved <= dollars(saving.group(7)), sentence
            seen.add("expected saving")
        no_saving = re.search(rf"would cost {MONEY} .*not expected to lower that", sentence)
        if no_saving:
            after = re.search(rf"about {MONEY} once known", sentence)
            assert dollars(after.group(1)) >= dollars(no_saving.group(1)), sentence
            seen.add("no saving")
        risk_saving = re.search(
            rf"Its risk, {MONEY} with the price included, is the lowest: .+ risks {MONEY}, "
            rf"so ordering .+ is expected to save {MONEY}",
            sentence,
        )
        if risk_saving:
            chosen, conclude, saved = (dollars(risk_saving.group(i)) for i in (1, 2, 3))
            assert round(conclude - chosen, 2) == saved and saved >= 0, sentence
            seen.add("risk saving")
        lowest = re.match(rf"Its risk, {MONEY}, is the lowest: (.+)\.", sentence)
        if lowest:
            mine = dollars(lowest.group(1))
            others = [dollars(v) for v in re.findall(rf"risks {MONEY}", lowest.group(2))]
            assert others and all(mine <= v for v in others), sentence
            seen.add("lowest risk")
        refer = re.search(
            rf"a referral costs {MONEY} in expectation, less than the cheapest conclusion, "
            rf".+, at {MONEY}",
            sentence,
        )
        if refer:
            assert dollars(refer.group(1)) < dollars(refer.group(2)), sentence
            seen.add("refer cheaper")
        odds = re.search(rf"would cost {MONEY} in expected errors against {MONEY} for", sentence)
        if odds:
            assert dollars(odds.group(2)) <= dollars(odds.group(1)), sentence
            seen.add("against the odds")
        against_charge = re.search(
            rf"Refer's risk, {MONEY}, .+ so its risk is {PERCENT} of {MONEY} less {PERCENT} "
            rf"of {MONEY}, about {MONEY}",
            sentence,
        )
        if against_charge:
            risk = dollars(against_charge.group(1))
            wrong, penalty = float(against_charge.group(2)) / 100, dollars(against_charge.group(3))
            right, reward = float(against_charge.group(4)) / 100, dollars(against_charge.group(5))
            assert dollars(against_charge.group(6)) == risk
            assert round(wrong + right, 3) == 1.0, sentence
            # the percentages are shown to 0.1%: the product is as close as that allows
            assert abs(wrong * penalty - right * reward - risk) <= 0.0005 * (penalty + reward)
            seen.add("refer against its charge")
        trees = re.search(r"(\d+) of the model's (\d+) trees? (is|are) waiting", sentence)
        if trees:
            assert int(trees.group(1)) <= int(trees.group(2)), sentence
            seen.add("trees waiting")
    # A negative risk is never left unexplained.
    if re.search(r"risk, −\$|risks −\$", text):
        assert "A risk below zero is an expected gain" in text, text
        seen.add("negative risk")
    # Counts: whole numbers, "about" only on a count that is not whole.
    evidence = advice.evidence
    stated = re.search(r"from (about )?([\d,]+) past patients? (\w+)", text)
    if branches:
        assert stated and stated.group(3) == "on", text
        lines = [re.search(r"\((about )?([\d,]+|less than one) past patient", b) for b in branches]
        shares = [float(re.search(PERCENT, b).group(1)) for b in branches]
        assert abs(sum(shares) - 100.0) <= 0.05 * len(shares) + 1e-9, branches
        if not stated.group(1) and not any(line.group(1) for line in lines):
            assert count(stated.group(2)) == sum(count(line.group(2)) for line in lines), (
                text,
                branches,
            )
        seen.add("branches add up")
    elif stated and evidence is not None:
        support = float(evidence.support)
        assert f"from {patients(support)} " in text, text
        if abs(support - round(support)) < 1e-6 * max(1.0, support):
            assert not stated.group(1), text
        seen.add("patients")
    if advice.known_count == 0 and advice.costs is not None and advice.costs.basis == "risk":
        assert "like this one" not in text, text
        seen.add("nothing answered")


def _walk(trained: TrainedModel, clinician, rows: list, seen: set[str], n_patients: int) -> None:
    tests = {t.index: t for t in trained.dataset.tests.all()}
    for number, row in enumerate(rows[:n_patients]):
        case = cases.start_case(user=clinician, trained_model=trained)
        skipped = False
        for _ in range(2 * len(tests) + 2):
            state = case_state(user=clinician, case=case)
            advice, explanation = state.advice, state.explanation
            check_sentences(advice, explanation.why, explanation.branches, seen)
            if advice.kind != "extract":
                break
            test = tests[advice.test_index]
            value = row[test.index]
            # every third patient: the first priced test advised is not available (branches)
            priced = float(advice.cost or 0) > 0
            if (
                value is None
                or (isinstance(value, float) and math.isnan(value))
                or (number % 3 == 1 and priced and not skipped)
            ):
                step_service.mark_unavailable(user=clinician, case=case, test=test)
                skipped = skipped or priced
            else:
                step_service.record_result(user=clinician, case=case, test=test, value=value)


DEMO_MODELS = [
    (name, learner, dict(params))
    for name, learners in DEMO_LEARNERS.items()
    for learner, _label, params in learners
]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "learner", "params"),
    DEMO_MODELS,
    ids=[f"{name} {key}" for name, key, _ in DEMO_MODELS],
)
def test_every_advice_text_on_every_demo_model_adds_up(name, learner, params):
    """Walk patients on one demo model; each stated sum, difference and count checks."""
    from django.contrib.auth.models import User

    # The demo models themselves, from their validated fixtures, as bin/run loads them.
    call_command("load_demo_data", "--no-experiment", "--only", name, stdout=open(os.devnull, "w"))
    clinician = User.objects.get(username="clinician")
    seen: set[str] = set()
    dataset = Dataset.objects.get(name=name)
    rows = demo_data.BUILDERS[name]()["rows"]
    trained = TrainedModel.objects.get(dataset=dataset, learner=learner)
    assert trained.status == TrainedModel.SUCCEEDED, trained.error
    started = time.monotonic()
    _walk(trained, clinician, rows, seen, n_patients=6)
    print(f"{name} {learner}: walked {time.monotonic() - started:.1f} s, checked {sorted(seen)}")
    # Counts were checked on every model, and a saving on every model that orders a test.
    assert seen & {"patients", "branches add up"}, seen
    assert seen & {"expected saving", "risk saving", "no saving"}, seen
