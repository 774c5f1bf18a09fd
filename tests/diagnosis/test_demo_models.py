"""Every demo model is worth offering: it beats ordering nothing and carries no warning."""

from __future__ import annotations

import os

import pytest
from django.core.management import call_command

from diagnosis.management import demo_data
from diagnosis.management.commands.load_demo_data import DEMO_LEARNERS, DEMO_MATRICES, DEMO_MATRIX
from diagnosis.models import TrainedModel
from diagnosis.selectors.models import model_warnings
from diagnosis.services.approval import DEMO_REASON


@pytest.mark.django_db
def test_every_demo_model_beats_ordering_nothing():
    """Each demo model, approved by the set-up, under the clinical matrix, costs less per
    held-out patient than none."""
    from django.contrib.auth.models import User

    call_command("load_demo_data", stdout=open(os.devnull, "w"))
    clinician = User.objects.get(username="clinician")
    models = list(TrainedModel.objects.select_related("dataset", "error_matrix"))
    assert len(models) == sum(len(DEMO_LEARNERS[name]) for name in demo_data.BUILDERS)
    for model in models:
        assert model.status == TrainedModel.SUCCEEDED, (model.name, model.error)
        # approved by the set-up, with its reason, so the demo clinician sees it
        assert (model.approval, model.approval_reason) == (TrainedModel.APPROVED, DEMO_REASON)
        assert model.error_matrix is not None
        assert model.error_matrix.name == DEMO_MATRICES.get(model.dataset.name, DEMO_MATRIX)
        # Not 0/1 or uniform loss: errors differ in price, as they do for a clinician.
        matrix = model.matrix_snapshot
        errors = {v for i, row in enumerate(matrix) for j, v in enumerate(row) if i != j}
        assert len(errors) > 1, (model.name, matrix)
        metrics = model.metrics
        nothing = metrics["baselines"]["order_nothing"]["mean_total_cost"]
        assert metrics["mean_total_cost"] < nothing, (
            model.name,
            metrics["mean_total_cost"],
            nothing,
        )
        assert metrics["test_order_frequency"], f"{model.name} orders no test"
        assert model_warnings(user=clinician, trained_model=model) == [], model.name
        if model.dataset.name == demo_data.PIMA:  # its diagnostic test, once never ordered
            assert "glucose" in metrics["test_order_frequency"]
