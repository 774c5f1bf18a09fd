"""Who is calling /cds-services: the JWT every CDS Hooks call carries (``Authorization:
Bearer``), verified with joserfc against the keys of the client registered for its issuer.

As CDS Hooks 2.0 asks: the token names its issuer (``iss``), this service's endpoint as its
audience (``aud``), an expiry (``exp``), when it was made (``iat``) and a unique id (``jti``).
A missing or malformed token, an unknown issuer, a bad signature, an expired token, a wrong
audience or a ``jti`` presented before is refused with :class:`CdsRefused` (401); a client an
admin switched off with 403.  A ``jti`` is kept (``SeenJti``) until its token expires.

:func:`verify_token` checks a token and :func:`remember_jti` spends its ``jti``: the CDS
endpoints call the second inside the transaction that holds the call's own work (its case,
steps, cards), so a call whose database connection is lost before it commits leaves no
``jti`` behind: ``DatabaseRetryMiddleware`` may run it once more (and the EHR may send it
again), while a call that was answered, a refusal included, has spent its token."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import requests
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone
from joserfc import jws, jwt
from joserfc.errors import ExpiredTokenError, JoseError, MissingClaimError
from joserfc.jwk import KeySet

from diagnosis.integration.models import CdsClient, SeenJti

__all__ = [
    "ALGORITHMS",
    "CdsRefused",
    "VerifiedToken",
    "remember_jti",
    "verify_call",
    "verify_token",
]

log = logging.getLogger(__name__)

#: CDS Hooks asks for ES384 or RS384; the SHA-256 and SHA-512 members of both families too
ALGORITHMS = ["ES384", "RS384", "ES256", "RS256", "ES512", "RS512", "PS384"]
#: seconds of clock difference forgiven on exp and iat
LEEWAY = 30
#: a token may live at most this long (CDS Hooks: 5 minutes; a little slack): a longer one is
#: refused, so the replay table stays small
MAX_LIFETIME = timedelta(minutes=10)
JWKS_CACHE_SECONDS = 300
JWKS_MAX_BYTES = 64 * 1024


class CdsRefused(Exception):
    """A call refused before anything else is read: ``status`` 401 or 403 and why."""

    def __init__(self, message: str, status: int = 401) -> None:
        super().__init__(message)
        self.status = status


def _unverified_claims(token: str) -> dict[str, Any]:
    try:
        compact = jws.extract_compact(token.encode("ascii"))
        claims = json.loads(compact.payload)
    except (JoseError, ValueError, UnicodeError) as exc:
        raise CdsRefused(f"The bearer token is not a JWT ({exc}).") from None
    if not isinstance(claims, dict):
        raise CdsRefused("The JWT's claims are not a JSON object.")
    return claims


def _fetch_jwks(url: str) -> dict[str, Any]:
    try:
        with requests.get(url, timeout=5, stream=True, allow_redirects=False) as answer:
            answer.raise_for_status()
            body = answer.raw.read(JWKS_MAX_BYTES + 1, decode_content=True)
    except requests.RequestException as exc:
        raise CdsRefused(f"The client's JWKS at {url} could not be read ({exc}).") from None
    if len(body) > JWKS_MAX_BYTES:
        raise CdsRefused(f"The client's JWKS at {url} is larger than 64 KB.")
    try:
        document = json.loads(body)
    except ValueError:
        raise CdsRefused(f"The client's JWKS at {url} is not JSON.") from None
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise CdsRefused(f'The client\'s JWKS at {url} is not {{"keys": [...]}}.')
    return document


def _url_keys(url: str, *, fresh: bool) -> list[dict[str, Any]]:
    key = f"cds-jwks:{url}"
    if not fresh:
        try:
            cached = cache.get(key)
        except Exception:  # the cache (Redis) is out: read the keys from the EHR
            cached = None
        if cached is not None:
            return cached
    keys = [k for k in _fetch_jwks(url)["keys"] if isinstance(k, dict)]
    try:
        cache.set(key, keys, JWKS_CACHE_SECONDS)
    except Exception:
        log.warning("CDS Hooks: the cache is out; the JWKS at %s is read on every call", url)
    return keys


def _key_set(client: CdsClient, kid: Any) -> KeySet:
    """The client's public keys: inline, then its URL's (cached; read again when the token
    names a key id the cached set lacks: the EHR rotated its keys)."""
    keys = list((client.jwks or {}).get("keys", []))
    if client.jwks_url:
        fetched = _url_keys(client.jwks_url, fresh=False)
        if kid is not None and all(k.get("kid") != kid for k in keys + fetched):
            fetched = _url_keys(client.jwks_url, fresh=True)
        keys += fetched
    public = [
        {k: v for k, v in key.items() if k not in ("d", "p", "q", "dp", "dq", "qi", "k")}
        for key in keys
    ]
    try:
        return KeySet.import_key_set({"keys": public})
    except (JoseError, ValueError, TypeError, KeyError) as exc:
        raise CdsRefused(f"The client's keys cannot be read ({exc}).") from None


@dataclass(frozen=True)
class VerifiedToken:
    """A valid, fresh JWT of an active client, its ``jti`` not yet spent."""

    client: CdsClient
    jti: str
    expires_at: datetime


def verify_call(*, authorization: str, audiences: list[str]) -> CdsClient:
    """:func:`verify_token`, its ``jti`` spent at once (in a transaction of its own)."""
    token = verify_token(authorization=authorization, audiences=audiences)
    remember_jti(token)
    return token.client


def verify_token(*, authorization: str, audiences: list[str]) -> VerifiedToken:
    """The active client whose valid, fresh JWT ``authorization`` carries, with the token's
    ``jti`` (not yet checked against those seen: :func:`remember_jti`); :class:`CdsRefused`
    otherwise.  ``audiences``: the URLs this call may name as ``aud``."""
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise CdsRefused("Send the EHR's JWT as 'Authorization: Bearer <jwt>'.")
    claims = _unverified_claims(token)
    issuer = claims.get("iss")
    if not isinstance(issuer, str) or not issuer:
        raise CdsRefused("The JWT names no issuer (iss).")
    client = CdsClient.objects.select_related("clinician").filter(issuer=issuer).first()
    if client is None:
        raise CdsRefused(f"Issuer {issuer[:200]!r} is not a registered CDS Hooks client.")
    if not client.active:
        raise CdsRefused("This CDS Hooks client is switched off.", status=403)
    try:
        header = jws.extract_compact(token.encode("ascii")).headers()
        verified = jwt.decode(token, _key_set(client, header.get("kid")), algorithms=ALGORITHMS)
    except CdsRefused:
        raise
    except (JoseError, ValueError, TypeError) as exc:
        raise CdsRefused(
            f"The JWT's signature does not verify with the client's keys ({exc})."
        ) from None
    now = int(timezone.now().timestamp())
    rules = jwt.JWTClaimsRegistry(
        now=now,
        leeway=LEEWAY,
        iss={"essential": True, "value": issuer},
        aud={"essential": True, "values": audiences},
        exp={"essential": True},
        iat={"essential": True},
        jti={"essential": True},
    )
    try:
        rules.validate(verified.claims)
    except ExpiredTokenError:
        raise CdsRefused("The JWT has expired.") from None
    except MissingClaimError as exc:
        raise CdsRefused(f"The JWT lacks a claim CDS Hooks requires ({exc}).") from None
    except JoseError as exc:
        if "aud" in str(exc):
            raise CdsRefused(f"The JWT's audience is not this service ({audiences[0]}).") from None
        raise CdsRefused(f"The JWT's claims are not valid ({exc}).") from None
    expires, jti = verified.claims["exp"], verified.claims["jti"]
    if not isinstance(expires, int | float) or isinstance(expires, bool):
        raise CdsRefused("The JWT's exp is not a time.")
    if not isinstance(jti, str) or not jti or len(jti) > 255:
        raise CdsRefused("The JWT's jti must be text of at most 255 characters.")
    expires_at = datetime.fromtimestamp(float(expires), tz=UTC)
    if expires_at > timezone.now() + MAX_LIFETIME:
        raise CdsRefused("The JWT lives too long: CDS Hooks tokens expire within 5 minutes.")
    return VerifiedToken(client=client, jti=jti, expires_at=expires_at)


#: how often one process deletes a client's expired ``jti`` rows (seconds): a delete after
#: every call cost each hook call a transaction and a disk flush of its own; rows kept a
#: little past their expiry change nothing (an expired token is refused by its ``exp``)
SWEEP_EVERY = 60.0
_swept_at: dict[int, float] = {}


def remember_jti(token: VerifiedToken) -> None:
    """Keep the token's ``jti`` until it expires (plus the leeway), in the caller's transaction
    when there is one; :class:`CdsRefused` when it was kept before (a replay).  The client's
    expired ``jti`` rows are deleted after the commit, at most once per ``SWEEP_EVERY``
    seconds in this process."""
    client = token.client
    keep_until = token.expires_at + timedelta(seconds=LEEWAY)
    try:
        with transaction.atomic():
            SeenJti.objects.create(client=client, jti=token.jti, expires_at=keep_until)
    except IntegrityError:
        raise CdsRefused("This JWT was presented before (its jti is replayed).") from None

    now = time.monotonic()
    if now - _swept_at.get(client.pk, -SWEEP_EVERY) < SWEEP_EVERY:
        return
    _swept_at[client.pk] = now

    def forget_expired() -> None:
        SeenJti.objects.filter(client=client, expires_at__lt=timezone.now()).delete()

    transaction.on_commit(forget_expired, robust=True)
