"""Hot-path reads on a raw cursor: the SQL written once per process from the models' metadata.

A step's fixed reads (the API token with its user, the case row with its model and dataset,
the dataset's tests, the case's steps) cost the ORM more CPU to compile than PostgreSQL takes
to answer them (a ``select_related`` read ~1.5 ms against ~0.2 ms for the same SQL on a raw
cursor).  Here each such query is written once from the models' own fields (their columns,
in their order), and each row is made into model instances as the ORM makes them: each
field's own database converters (``get_db_converters``: a JSON field's ``from_db_value``),
then ``Model.from_db`` (deferred fields stay deferred).  The instances are the ORM's: saving,
deferred loading and related descriptors work on them as usual.

No permission is checked here; the callers (services, selectors) check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.db import connection
from django.db.models import Field, Model

__all__ = ["Columns", "column_name", "columns", "fetch_instances", "fetch_rows"]


@dataclass(frozen=True)
class Columns:
    """The selected columns of one model under a table alias, and how to make its instance."""

    model: type[Model]
    alias: str
    fields: tuple[Field, ...]
    converters: tuple[tuple[int, tuple[Callable, ...], Any], ...]

    @property
    def sql(self) -> str:
        quote = connection.ops.quote_name
        return ", ".join(f"{quote(self.alias)}.{quote(f.column)}" for f in self.fields)

    @property
    def width(self) -> int:
        return len(self.fields)

    @property
    def table(self) -> str:
        quote = connection.ops.quote_name
        return f"{quote(self.model._meta.db_table)} {quote(self.alias)}"

    def column(self, name: str) -> str:
        """``alias."column"`` of field ``name`` (for joins and conditions)."""
        quote = connection.ops.quote_name
        return f"{quote(self.alias)}.{quote(column_name(self.model, name))}"

    def instance(self, values: Sequence[Any]) -> Model:
        """The model instance of this part of a row (``values``: its ``width`` values)."""
        values = list(values)
        for index, funcs, expression in self.converters:
            value = values[index]
            for convert in funcs:
                value = convert(value, expression, connection)
            values[index] = value
        return self.model.from_db(connection.alias, [f.attname for f in self.fields], values)


def column_name(model: type[Model], name: str) -> str:
    """The database column of ``model``'s field ``name`` (a field with a column of its own)."""
    field = model._meta.get_field(name)
    assert isinstance(field, Field)  # not a reverse relation or a generic foreign key
    return field.column


@cache
def columns(model: type[Model], alias: str, defer: tuple[str, ...] = ()) -> Columns:
    """Every concrete field of ``model`` but ``defer``'s, in the model's order (per process)."""
    fields = tuple(f for f in model._meta.concrete_fields if f.attname not in defer)
    converters = []
    for index, field in enumerate(fields):
        funcs = tuple(connection.ops.get_db_converters(field.get_col(alias))) + tuple(
            field.get_db_converters(connection)  # type: ignore[attr-defined]  # Django's; unstubbed
        )
        if funcs:
            converters.append((index, funcs, field.get_col(alias)))
    return Columns(model, alias, fields, tuple(converters))


def fetch_rows(sql: str, params: Iterable[Any]) -> list[tuple]:
    """The rows of ``sql`` on the default connection (one query, counted like the ORM's)."""
    with connection.cursor() as cursor:
        cursor.execute(sql, list(params))
        return cursor.fetchall()


def fetch_instances(parts: Sequence[Columns], sql: str, params: Iterable[Any]) -> list[list]:
    """Each row of ``sql`` (selecting ``parts``' columns in order, then any extra values) as
    ``[instance of part 1, instance of part 2, ..., extra values...]``."""
    found = []
    for row in fetch_rows(sql, params):
        out: list = []
        start = 0
        for part in parts:
            out.append(part.instance(row[start : start + part.width]))
            start += part.width
        out.extend(row[start:])
        found.append(out)
    return found
