"""The training app's page: the form that queues a training (a model admin's)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods

from diagnosis.permissions import require_model_admin
from diagnosis.training.forms import TrainForm
from diagnosis.training.services import training
from diagnosis.views.common import messages_of, page

__all__ = ["train"]


@require_http_methods(["GET", "POST"])
def train(request: HttpRequest) -> HttpResponse:
    """Form: dataset, learner and its parameters, error matrix; queues the training."""
    require_model_admin(request.user)
    form = TrainForm(request.POST or None)
    errors: list[str] = []
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            trained = training.request_training(
                user=request.user,
                dataset=data["dataset"],
                learner=data["learner"],
                params=data["params"],
                error_matrix=data.get("error_matrix"),
                name=data.get("name") or "",
            )
        except ValidationError as exc:
            errors = messages_of(exc)
        else:
            return redirect("model-detail", pk=trained.pk)
    status = 400 if request.method == "POST" else 200
    return page(request, "training/train.html", {"form": form, "errors": errors}, status=status)
