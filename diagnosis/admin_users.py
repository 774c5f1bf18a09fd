"""Read-only user fields in the admin that link to the user's page only for whoever may open it.

Django renders a read-only foreign key as a link to the related object's change page, without
asking whether the reader may open it: a model admin reading a training's "created by" was sent
to ``/admin/auth/user/<id>/change/`` and answered 403 (issue 28's link crawl).  With this mixin
a reader without ``auth.view_user`` sees the plain username instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin

if TYPE_CHECKING:
    # What the mixin is combined with (ModelAdmin, TabularInline), so mypy knows super()'s
    # methods; at run time it stays a plain mixin.
    from django.contrib.admin.options import BaseModelAdmin

    _AdminBase = BaseModelAdmin[Any]
else:
    _AdminBase = object

__all__ = ["UserLinksMixin"]


def _username(user) -> str:
    return user.get_username() if user is not None else "—"


class UserLinksMixin(_AdminBase):
    """``user_fields``: the read-only user foreign keys shown as plain names to readers who may
    not view users (a ``<field>_name`` column of the same label takes each one's place)."""

    user_fields: tuple[str, ...] = ()

    def _plain(self, request) -> bool:
        return not request.user.has_perm("auth.view_user")

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        if not self._plain(request):
            return fields
        swapped = [f"{name}_name" if name in self.user_fields else name for name in fields]
        return list(dict.fromkeys(swapped))  # once each, in order

    def get_readonly_fields(self, request, obj=None):
        # the user field stays read-only (out of the form); its plain name is read-only too
        readonly = list(super().get_readonly_fields(request, obj))
        if not self._plain(request):
            return readonly
        return readonly + [f"{name}_name" for name in self.user_fields if name in readonly]

    @admin.display(description="created by")
    def created_by_name(self, obj) -> str:
        return _username(obj.created_by)

    @admin.display(description="clinician")
    def clinician_name(self, obj) -> str:
        return _username(obj.clinician)

    @admin.display(description="user")
    def user_name(self, obj) -> str:
        return _username(obj.user)
