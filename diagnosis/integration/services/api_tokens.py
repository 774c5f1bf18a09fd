"""Bearer tokens for /api/v1: issued once in plain text, kept only as a SHA-256 hash."""

from __future__ import annotations

import functools
import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection
from django.utils import timezone

from diagnosis.integration.models import ApiToken
from diagnosis.permissions import remember_groups
from diagnosis.selectors import raw_rows

__all__ = ["authenticate_token", "issue_api_token", "revoke_api_token"]

PREFIX = "cad_"  # marks the secret as this product's, for secret scanners and people
#: How often last_used_at is written: once a minute is enough and spares a write per call.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def issue_api_token(
    *, issuer: User | None, owner: User, name: str, valid_days: int = 365
) -> tuple[ApiToken, str]:
    """A new token acting as ``owner``; the plain token is returned once and never stored.

    ``issuer`` is the owner themself or a superuser; ``None`` means the server's operator
    (``manage.py api_token``), who can already read the database.
    """
    if issuer is not None and issuer.pk != owner.pk and not issuer.is_superuser:
        raise PermissionDenied("Only a superuser may issue a token for someone else.")
    if not owner.is_active:
        raise ValidationError(f"{owner} is not active; an inactive user gets no token.")
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise ValidationError("Name the system that will use the token (1 to 100 characters).")
    if not 1 <= valid_days <= 3650:
        raise ValidationError("A token is valid for 1 to 3650 days.")
    plain = PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=owner,
        name=name,
        key_hash=_hash(plain),
        prefix=plain[:12],
        created_by=issuer,
        expires_at=timezone.now() + timedelta(days=valid_days),
    )
    return token, plain


def revoke_api_token(*, user: User, token: ApiToken) -> ApiToken:
    """End a token at once: its owner or a superuser may."""
    if token.user_id != user.pk and not user.is_superuser:
        raise PermissionDenied("Only the token's owner or a superuser may revoke it.")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def authenticate_token(*, presented: str) -> User | None:
    """The active user a presented token acts as, or None (unknown, revoked, expired)."""
    if not presented or len(presented) > 200:
        return None
    if connection.vendor == "postgresql":
        token = _token_with_user_and_groups(_hash(presented))
    else:
        token = (
            ApiToken.objects.select_related("user")
            .filter(key_hash=_hash(presented), revoked_at__isnull=True)
            .first()
        )
    now = timezone.now()
    if token is None or (token.expires_at is not None and token.expires_at <= now):
        return None
    if not token.user.is_active:
        return None
    if hasattr(token, "group_names"):
        remember_groups(token.user, token.group_names)
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user


def _token_with_user_and_groups(key_hash: str) -> ApiToken | None:
    """The unrevoked token of ``key_hash`` with its user, and the user's group names as
    ``group_names`` (for the permission checks of this request), in one query on PostgreSQL:
    written once per process (``selectors.raw_rows``), not compiled by the ORM per call."""
    token_part, user_part = _token_parts()
    rows = raw_rows.fetch_instances((token_part, user_part), _token_sql(), [key_hash])
    if not rows:
        return None
    token, user, names = rows[0]
    ApiToken.user.field.set_cached_value(token, user)
    token.group_names = list(names or [])
    return token


def _token_parts() -> tuple[raw_rows.Columns, raw_rows.Columns]:
    return (
        raw_rows.columns(ApiToken, ApiToken._meta.db_table),
        raw_rows.columns(get_user_model(), "u"),
    )


@functools.cache
def _token_sql() -> str:
    token, user = _token_parts()
    quote = connection.ops.quote_name
    through = get_user_model().groups.through
    member = quote(through._meta.db_table)
    member_user = f"{member}.{quote(raw_rows.column_name(through, 'user'))}"
    member_group = f"{member}.{quote(raw_rows.column_name(through, 'group'))}"
    group = quote(Group._meta.db_table)
    names = (
        f"ARRAY(SELECT {group}.{quote('name')} FROM {group} INNER JOIN {member}"
        f" ON ({group}.{quote('id')} = {member_group})"
        f" WHERE {member_user} = {token.column('user')})"
    )
    return (
        f"SELECT {token.sql}, {user.sql}, {names} FROM {token.table}"
        f" INNER JOIN {user.table} ON ({token.column('user')} = {user.column('id')})"
        f" WHERE {token.column('key_hash')} = %s AND {token.column('revoked_at')} IS NULL"
        " LIMIT 1"
    )
