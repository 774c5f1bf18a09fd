"""The catalog's audit in the admin (imported by ``diagnosis/catalog/admin.py``).

The dataset's **History** page lists every change of its catalog (prices, groups, error
matrices, class labels, choices) with old and new values, by django-simple-history, for
model administrators and superusers (:class:`CatalogHistoryMixin`).  The case access log and
the teams are the clinic's admin pages (``diagnosis/clinic/admin.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin

from .selectors.catalog_history import catalog_history

__all__ = ["CatalogHistoryMixin"]

if TYPE_CHECKING:
    # The admin the mixin is combined with, so mypy knows super()'s methods; at run time it
    # stays a plain mixin.
    _ModelAdminBase = admin.ModelAdmin[Any]
else:
    _ModelAdminBase = object


class CatalogHistoryMixin(_ModelAdminBase):
    """Adds the catalog's recorded changes (old → new, who, when) to the admin's History page."""

    object_history_template = "admin/catalog/dataset/object_history.html"

    def history_view(self, request, object_id, extra_context=None):
        dataset = self.get_object(request, object_id)
        if dataset is not None and self.has_view_or_change_permission(request, dataset):
            extra_context = {
                **(extra_context or {}),
                "catalog_changes": catalog_history(user=request.user, dataset=dataset),
            }
        return super().history_view(request, object_id, extra_context)
