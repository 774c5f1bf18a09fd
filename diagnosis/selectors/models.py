"""Trained models a user may see, and the report behind the model's trust page."""

from __future__ import annotations

from django.db.models import QuerySet

from .. import learner_registry
from ..models import TrainedModel
from ..permissions import is_model_admin, require_clinician

__all__ = ["model_report", "models_for_user", "require_model_access"]


def models_for_user(*, user) -> QuerySet[TrainedModel]:
    """Models a user may see: all for model admins, ready ones for clinicians."""
    qs = TrainedModel.objects.select_related("dataset", "error_matrix", "created_by")
    if is_model_admin(user):
        return qs
    require_clinician(user)
    return qs.filter(status=TrainedModel.SUCCEEDED)


def require_model_access(user, trained: TrainedModel) -> None:
    if not is_model_admin(user):
        require_clinician(user)


def model_report(*, user, trained_model: TrainedModel) -> dict:
    """The trust page's content: what the model was trained with and how it did on held-out cases."""
    require_model_access(user, trained_model)
    dataset = trained_model.dataset
    spec = learner_registry.LEARNERS.get(trained_model.learner)
    snapshot = trained_model.cost_snapshot or {}
    names = snapshot.get("names", [])
    tests = {t.name: t for t in dataset.tests.all()}
    prices = []
    for i, name in enumerate(names):
        test = tests.get(name)
        prices.append(
            {
                "index": i,
                "name": name,
                "label": test.display_label if test else name,
                "unit": test.unit if test else "",
                "price": snapshot["costs"][i],
                "discounted_price": snapshot["discounted"][i],
                "group": snapshot["groups"][i],
                "delayed": bool(snapshot["delayed"][i]),
                "derived_from": [names[j] for j in snapshot.get("derived", {}).get(str(i), [])],
                "free": i in set(snapshot.get("free", [])),
            }
        )
    metrics = dict(trained_model.metrics or {})
    return {
        "model": trained_model,
        "learner": trained_model.learner,
        "learner_label": spec.label if spec else trained_model.learner,
        "params": trained_model.params,
        "param_labels": {p.name: p.label for p in spec.params} if spec else {},
        "dataset_name": dataset.name,
        "dataset_size": dataset.cases.count(),
        "class_labels": list(dataset.class_labels),
        "prices": prices,
        "matrix": trained_model.matrix_snapshot,
        "error_matrix_name": trained_model.error_matrix.name
        if trained_model.error_matrix
        else "0/1 loss",
        "reject_cost": trained_model.reject_cost_snapshot,
        "status": trained_model.status,
        "error": trained_model.error,
        "metrics": metrics,
        "accuracy": metrics.get("accuracy"),
        "mean_test_cost": metrics.get("mean_test_cost"),
        "normalized_cost": metrics.get("normalized_cost"),
        "reject_rate": metrics.get("reject_rate"),
        "mean_misclassification_cost": metrics.get("mean_misclassification_cost"),
        "n_test_cases": metrics.get("n_test_cases"),
        "test_order_frequency": metrics.get("test_order_frequency", {}),
        "fit_seconds": trained_model.fit_seconds,
        "checkpoints": [
            {
                "elapsed_seconds": c.elapsed_seconds,
                "estimated_cost": c.estimated_cost,
                "label": c.label,
            }
            for c in trained_model.checkpoints.all()
        ],
    }
