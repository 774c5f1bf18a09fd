"""Trained models as the clinic reads them: with their cases counted, opened from a case, and
what their cases came to (the models' own reads are :mod:`diagnosis.training.selectors.models`)."""

from __future__ import annotations

from django.db.models import BooleanField, Count, ExpressionWrapper, Q, QuerySet

from diagnosis.permissions import ModelNotFound, is_model_admin, require_clinician
from diagnosis.training.models import TrainedModel

from ..models import DiagnosisCase
from ..permissions import can_read_case

__all__ = ["case_outcomes", "model_for_page", "models_for_user"]


def models_for_user(*, user) -> QuerySet[TrainedModel]:
    """Models a user may see: all for model admins, approved ready ones for clinicians.

    A draft (never approved) or retired model is not shown to a clinician at all.

    Each carries ``n_cases_open``, ``n_cases_classified`` and ``n_cases_referred``
    (referrals are a decision of their own, counted apart from conclusions), and
    ``has_fitted_json`` for ``is_ready``: the JSON itself (up to megabytes per model) is not
    read; the fitted model comes from the estimator cache.
    """
    qs = (
        TrainedModel.objects.select_related("dataset", "error_matrix", "created_by")
        .defer("model_json")
        .annotate(
            n_cases_open=Count("cases", filter=Q(cases__status=DiagnosisCase.OPEN)),
            n_cases_classified=Count("cases", filter=Q(cases__status=DiagnosisCase.CLASSIFIED)),
            n_cases_referred=Count("cases", filter=Q(cases__status=DiagnosisCase.REFERRED)),
            has_fitted_json=ExpressionWrapper(~Q(model_json=""), output_field=BooleanField()),
        )
    )
    if is_model_admin(user):
        return qs
    require_clinician(user)
    return qs.filter(status=TrainedModel.SUCCEEDED, approval=TrainedModel.APPROVED)


def model_for_page(*, user, pk: int, case_id: int | None = None) -> TrainedModel:
    """Model ``pk`` for its pages (model page, tree, trees), with its dataset.

    A model admin reads any model.  A clinician reads an approved one, or, through a case of
    this model they may read (``case_id``), the model that case was decided with even after
    it was retired.  Anything else raises :class:`ModelNotFound`, like a missing model.
    """
    trained = TrainedModel.objects.select_related("dataset").filter(pk=pk).first()
    if trained is None:
        raise ModelNotFound(pk)
    if is_model_admin(user):
        return trained
    if case_id is not None:  # the patient's path: whoever may read the case, as the case says
        case = DiagnosisCase.objects.filter(pk=case_id, trained_model_id=pk).first()
        if case is not None and can_read_case(user, case):
            return trained
        raise ModelNotFound(pk)
    require_clinician(user)
    if trained.approval == TrainedModel.APPROVED:
        return trained
    raise ModelNotFound(pk)


def case_outcomes(trained_model: TrainedModel) -> dict[str, int]:
    """How many of the model's cases are open, classified and referred."""
    counts = dict(trained_model.cases.order_by().values_list("status").annotate(n=Count("id")))
    return {status: int(counts.get(status, 0)) for status, _ in DiagnosisCase.STATUS_CHOICES}
