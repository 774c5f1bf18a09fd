"""A case's start: a new patient with a ready, approved model and the matrix in force now.

Every step after it goes through :func:`diagnosis.clinic.services.step.apply_step`.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from diagnosis.permissions import ModelNotFound, require_clinician
from diagnosis.training.models import TrainedModel
from diagnosis.training.selectors.matrices import matrix_for_new_case

from ..models import DiagnosisCase
from ..selectors.cases import dataset_tests_of
from ..selectors.step_context import StepContext
from .access_log import log_case_access

__all__ = ["open_case", "start_case"]


def start_case(*, user, trained_model: TrainedModel, patient_reference: str = "") -> DiagnosisCase:
    """Open a case for a new patient with a ready model (:func:`open_case`'s case)."""
    return open_case(
        user=user, trained_model=trained_model, patient_reference=patient_reference
    ).case


@transaction.atomic
def open_case(
    *,
    user,
    trained_model: TrainedModel,
    patient_reference: str = "",
    access: str | None = None,
) -> StepContext:
    """Open a case for a new patient with a ready model; its :class:`StepContext`.

    ``access``: a :class:`~diagnosis.clinic.models.CaseAccess` action to log for the new case (the
    API's start answers with the case: a read), in the same transaction (one commit).

    The case copies the model's error matrix in force now (``selectors.matrices``) and is
    decided with it for good, whatever the dataset's matrix becomes.  The context holds the
    new row (with ``trained_model`` and the clinician as given), no steps, and the dataset's
    tests: ``selectors.case_state(context=...)`` answers the start without reading it back.
    """
    require_clinician(user)
    if trained_model.approval != TrainedModel.APPROVED:  # a draft or retired model: not found
        raise ModelNotFound(trained_model.pk)
    if not trained_model.is_ready:
        raise ValidationError(
            f"Model {trained_model} is not ready (status {trained_model.status}); "
            "choose a trained model."
        )
    case = DiagnosisCase.objects.create(
        trained_model=trained_model,
        clinician=user,
        patient_reference=(patient_reference or "").strip()[:200],
        matrix_snapshot=matrix_for_new_case(trained_model),
    )
    if access is not None:
        log_case_access(user=user, case_id=case.pk, action=access)
    return StepContext(case=case, steps=[], tests=dataset_tests_of(case))
