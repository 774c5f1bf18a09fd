"""The training's admin: trained models (retrain, cancel, filter by old values), and on the
dataset's admin what the training adds: the models still on old values, and retraining them."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse

from diagnosis.admin_users import UserLinksMixin
from diagnosis.catalog.admin import DatasetAdmin, ModelAdminsOnly
from diagnosis.catalog.models import Dataset
from diagnosis.shared import learner_registry

from .models import TrainedModel, TrainingCheckpoint
from .selectors import stale as stale_selectors
from .services import matrices as matrix_services
from .services import training as training_services

__all__ = ["TrainedModelAdmin", "TrainingDatasetAdmin"]


def _retrain(modeladmin, request, trained_models) -> None:
    """Queue a new training of each model (same learner, params and matrix; current prices)."""
    for trained in trained_models:
        try:
            new = matrix_services.retrain_with_current_values(
                user=request.user, trained_model=trained
            )
        except (ValidationError, PermissionDenied) as exc:
            modeladmin.message_user(
                request,
                f"{trained}: {' '.join(getattr(exc, 'messages', [str(exc)]))}",
                messages.ERROR,
            )
        else:
            modeladmin.message_user(request, f"Queued {new} (#{new.pk}).", messages.SUCCESS)


class CheckpointInline(admin.TabularInline):
    model = TrainingCheckpoint
    fields = ("elapsed_seconds", "estimated_cost", "label", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(TrainedModel)
class TrainedModelAdmin(UserLinksMixin, ModelAdminsOnly):
    user_fields = ("created_by",)
    list_display = [
        "__str__",
        "dataset",
        "learner",
        "status",
        "approval",  # changed on the model card only (services/approval.py, audited)
        "progress_percent",
        "created_at",
        "fit_seconds",
    ]
    list_filter = ["status", "approval", "learner", "dataset"]
    search_fields = ["name"]
    actions = ["retrain", "cancel"]
    inlines = [CheckpointInline]
    fields = (
        "name",
        "dataset",
        "learner_name",
        "parameters",
        "error_matrix",
        "status",
        "progress",
        "progress_message",
        "error",
        "created_by",
        "created_at",
        "started_at",
        "finished_at",
        "heartbeat_at",
        "fit_seconds",
        "metrics",
        "cost_snapshot",
        "matrix_snapshot",
        "reject_cost_snapshot",
        "celery_task_id",
        "stop_requested",
        "anytime_round",
    )
    readonly_fields = [f for f in fields if f != "name"]

    class ValuesFilter(admin.SimpleListFilter):
        """Models trained on the dataset's current prices and matrix, or on older ones."""

        title = "trained on"
        parameter_name = "values"

        def lookups(self, request, model_admin):
            return [("old", "old prices or matrix"), ("current", "current values")]

        def queryset(self, request, queryset):
            if self.value() not in ("old", "current"):
                return queryset
            old = stale_selectors.stale_model_ids(user=request.user, queryset=queryset)
            if self.value() == "old":
                return queryset.filter(pk__in=old)
            return queryset.exclude(pk__in=old)

    @admin.display(description="learner")
    def learner_name(self, obj: TrainedModel) -> str:
        try:
            return learner_registry.get_spec(obj.learner).label
        except ValidationError:
            return obj.learner

    @admin.display(description="parameters")
    def parameters(self, obj: TrainedModel) -> str:
        """Each parameter under the training form's own label, with its value."""
        try:
            labels = {p.name: p.label for p in learner_registry.get_spec(obj.learner).params}
        except ValidationError:
            labels = {}
        shown = [f"{labels.get(k, k)}: {v}" for k, v in sorted((obj.params or {}).items())]
        return "; ".join(shown) or "defaults"

    @admin.display(description="progress")
    def progress_percent(self, obj: TrainedModel) -> str:
        return f"{obj.progress * 100:.0f}%"

    def get_list_filter(self, request):
        return [*self.list_filter, self.ValuesFilter]

    def has_add_permission(self, request) -> bool:
        return False  # trainings start from the Train page or the "retrain" action

    @admin.action(description="Retrain with the dataset's current prices")
    def retrain(self, request, queryset):
        _retrain(self, request, queryset)

    @admin.action(description="Cancel queued or running trainings")
    def cancel(self, request, queryset):
        for trained in queryset:
            try:
                training_services.cancel_training(user=request.user, trained_model=trained)
            except (ValidationError, PermissionDenied) as exc:
                self.message_user(
                    request,
                    f"{trained}: {' '.join(getattr(exc, 'messages', [str(exc)]))}",
                    messages.ERROR,
                )
            else:
                self.message_user(request, f"Cancelled {trained}.", messages.SUCCESS)


class TrainingDatasetAdmin(DatasetAdmin):
    """The catalog's dataset admin, with the models trained on its old values (a column, the
    page's list and warning after a save) and the action that retrains them."""

    actions = ["retrain_old_models", *DatasetAdmin.actions]

    def get_list_display(self, request):
        @admin.display(description="models on old values")
        def n_old_models(obj: Dataset) -> int:
            return len(stale_selectors.models_on_old_values(user=request.user, dataset=obj))

        # Added per request: the count needs the user (the selector checks the permission).
        return [*self.list_display[:-1], n_old_models, self.list_display[-1]]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        dataset = self.get_object(request, object_id)
        if dataset is not None and self.has_view_permission(request, dataset):
            extra_context = {
                **(extra_context or {}),
                "old_models": stale_selectors.models_on_old_values(
                    user=request.user, dataset=dataset
                ),
                "old_models_url": reverse("admin:training_trainedmodel_changelist")
                + f"?dataset__id__exact={dataset.pk}&values=old",
            }
        return super().change_view(request, object_id, form_url, extra_context)

    def response_change(self, request, obj):
        old = stale_selectors.models_on_old_values(user=request.user, dataset=obj)
        if old:
            listed = "; ".join(f"{s.trained} ({', '.join(s.reasons)})" for s in old)
            self.message_user(
                request,
                f"{len(old)} trained model(s) still use the values they were trained with: "
                f"{listed}. Retrain them with the action “Retrain the models trained on old "
                "values” (datasets list) or “Retrain” on the models list.",
                messages.WARNING,
            )
        return super().response_change(request, obj)

    @admin.action(description="Retrain the models trained on old values")
    def retrain_old_models(self, request, queryset):
        old = [
            s.trained
            for dataset in queryset
            for s in stale_selectors.models_on_old_values(user=request.user, dataset=dataset)
        ]
        if not old:
            self.message_user(request, "Every model already uses the current values.")
            return
        _retrain(self, request, old)


# The dataset's admin is the catalog's; the training adds its models' side to it.
admin.site.unregister(Dataset)
admin.site.register(Dataset, TrainingDatasetAdmin)
