"""The catalog's change history: every edit of a dataset, test, group or error matrix.

Records are django-simple-history's (``diagnosis/catalog/models/audit.py``); this selector
pairs each record with the one before it for the same row and lists what changed, old and new
value, who and when, newest first.  Model administrators and superusers read it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Field

from diagnosis.permissions import require_model_admin

from ..models import Dataset, DiagnosticTest, ErrorMatrix, TestGroup

__all__ = ["CatalogChange", "FieldChange", "catalog_history"]

#: What a record is called in the history, and which of its fields are not worth listing.
_KINDS = (
    (Dataset, "dataset"),
    (TestGroup, "group"),
    (DiagnosticTest, "test"),
    (ErrorMatrix, "error matrix"),
)
_HIDDEN = {"id", "dataset", "created_at"}
_TYPES = {"+": "created", "~": "changed", "-": "deleted"}


@dataclass(frozen=True)
class FieldChange:
    field: str
    old: str
    new: str


@dataclass
class CatalogChange:
    """One saved edit of one catalog row."""

    when: datetime
    who: str
    kind: str  # dataset / test / group / error matrix
    name: str
    action: str  # created / changed / deleted
    reason: str = ""
    changes: list[FieldChange] = field(default_factory=list)


def _text(value, field_name: str, group_names: dict[int, str]) -> str:
    if value is None or value == "":
        return "—"
    if field_name == "group":
        return group_names.get(value, f"group #{value}")
    if isinstance(value, (list, dict)):  # class labels, choices, a matrix: as JSON
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _verbose_name(model, name: str) -> str:
    found = model._meta.get_field(name)
    assert isinstance(found, Field)  # a history record holds the row's own columns
    return str(found.verbose_name)


def catalog_history(*, user, dataset: Dataset, limit: int = 500) -> list[CatalogChange]:
    """Every recorded edit of ``dataset`` and its tests, groups and error matrices, newest first.

    A change lists each field whose value differs from the row's previous record (a price,
    a discounted price, a group, the matrix, the class labels, the choices...).
    """
    require_model_admin(user)
    # ``history``: the manager simple_history's register() adds at import (models/audit.py),
    # which no stub declares
    group_names = {
        h.id: h.name
        for h in TestGroup.history.filter(  # type: ignore[attr-defined]
            dataset_id=dataset.pk
        ).order_by("history_date")
    }
    found: list[CatalogChange] = []
    for model, kind in _KINDS:
        records = model.history.select_related("history_user")  # type: ignore[union-attr]
        records = (
            records.filter(id=dataset.pk)
            if model is Dataset
            else records.filter(dataset_id=dataset.pk)
        )
        previous: dict[int, object] = {}
        for record in records.order_by("history_date", "history_id")[: limit * 4]:
            before = previous.get(record.id)
            previous[record.id] = record
            changes: list[FieldChange] = []
            if record.history_type == "~" and before is not None:
                delta = record.diff_against(before)
                changes = [
                    FieldChange(
                        field=_verbose_name(model, c.field),
                        old=_text(c.old, c.field, group_names),
                        new=_text(c.new, c.field, group_names),
                    )
                    for c in delta.changes
                    if c.field not in _HIDDEN
                ]
                if not changes:
                    continue  # saved without a change
            user_obj = record.history_user
            found.append(
                CatalogChange(
                    when=record.history_date,
                    who=user_obj.get_username() if user_obj is not None else "(no user: a script)",
                    kind=kind,
                    name=str(getattr(record, "name", "") or record.id),
                    action=_TYPES.get(record.history_type, record.history_type),
                    reason=record.history_change_reason or "",
                    changes=changes,
                )
            )
    found.sort(key=lambda c: c.when, reverse=True)
    return found[:limit]
