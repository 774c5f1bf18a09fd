"""CDS Hooks clients: an EHR's issuer, public keys, browser origins, the FHIR servers its hook
calls may name (``fhirServer``: the only URLs this service ever fetches observations from)
and the clinician whose cases its hook calls open and step.  Registered in the admin or by
``manage.py cds_client``; both check every field here."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import transaction
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from diagnosis.integration.models import CdsClient
from diagnosis.permissions import is_clinician

__all__ = [
    "clean_fhir_servers",
    "clean_jwks",
    "clean_origins",
    "fhir_server_allowed",
    "register_client",
]

#: key parameters only a private key has: a JWKS that holds them was pasted by mistake
_PRIVATE_PARTS = ("d", "p", "q", "dp", "dq", "qi", "k")


def clean_jwks(jwks: Any) -> dict[str, Any] | None:
    """``jwks`` as a JSON Web Key Set of public keys (None stays None); ValidationError for
    anything else, a private key included."""
    if jwks is None or jwks == "":
        return None
    if not isinstance(jwks, dict) or not isinstance(jwks.get("keys"), list) or not jwks["keys"]:
        raise ValidationError('The JWKS must be a JSON object {"keys": [...]} with a key.')
    for key in jwks["keys"]:
        if not isinstance(key, dict):
            raise ValidationError("Every key of the JWKS must be a JSON object.")
        private = [part for part in _PRIVATE_PARTS if part in key]
        if private:
            raise ValidationError(
                f"The JWKS holds private or secret key material ({', '.join(private)}); "
                "register the EHR's public keys only."
            )
    try:
        KeySet.import_key_set(jwks)  # type: ignore[arg-type]  # checked just above
    except (JoseError, ValueError, TypeError, KeyError) as exc:
        raise ValidationError(f"The JWKS cannot be read as keys: {exc}") from None
    return jwks


def clean_origins(origins: Any) -> list[str]:
    """Browser origins (``https://ehr.example[:port]``, no path), each at most once."""
    if origins in (None, ""):
        return []
    if isinstance(origins, str):
        origins = [o for o in origins.replace(",", " ").split() if o]
    if not isinstance(origins, list) or not all(isinstance(o, str) for o in origins):
        raise ValidationError("Allowed origins must be a list of origins.")
    cleaned = []
    for origin in origins:
        parts = urlsplit(origin)
        if (
            parts.scheme not in ("http", "https")
            or not parts.netloc
            or parts.path not in ("", "/")
            or parts.query
            or parts.fragment
        ):
            raise ValidationError(f"{origin!r} is not an origin like https://ehr.example.")
        origin = f"{parts.scheme}://{parts.netloc}".lower()
        if origin not in cleaned:
            cleaned.append(origin)
    return cleaned


def _fhir_base(url: str) -> str | None:
    """``url`` as a comparable FHIR base (scheme and host lower-cased, no trailing slash), or
    None when it is not an http(s) base URL without credentials, query or fragment."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port  # a port that is not a number raises here
    except ValueError:
        return None
    if (
        parts.scheme.lower() not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or parts.password is not None
        or parts.query
        or parts.fragment
        or "\\" in url
        or any(c.isspace() for c in url.strip())
    ):
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port is not None else host
    return f"{parts.scheme.lower()}://{netloc}{parts.path.rstrip('/')}"


def clean_fhir_servers(servers: Any) -> list[str]:
    """FHIR base URLs (``https://ehr.example/fhir``), each at most once, as they are compared."""
    if servers in (None, ""):
        return []
    if isinstance(servers, str):
        servers = [s for s in servers.replace(",", " ").split() if s]
    if not isinstance(servers, list) or not all(isinstance(s, str) for s in servers):
        raise ValidationError("FHIR servers must be a list of base URLs.")
    cleaned = []
    for server in servers:
        base = _fhir_base(server)
        if base is None:
            raise ValidationError(
                f"{server!r} is not a FHIR base URL like https://ehr.example/fhir "
                "(http or https, no user, query or fragment)."
            )
        if base not in cleaned:
            cleaned.append(base)
    return cleaned


def fhir_server_allowed(client: CdsClient, url: str) -> bool:
    """Whether ``url`` (a hook call's ``fhirServer``) is one of the client's registered FHIR
    base URLs: the same scheme, host, port and path, nothing more or less."""
    base = _fhir_base(url)
    return base is not None and base in (client.fhir_servers or [])


def clean_client(client: CdsClient) -> None:
    """Check a client's fields together (the admin form and :func:`register_client`)."""
    client.jwks = clean_jwks(client.jwks)
    client.allowed_origins = clean_origins(client.allowed_origins)
    client.fhir_servers = clean_fhir_servers(client.fhir_servers)
    if not client.issuer.strip():
        raise ValidationError({"issuer": "Give the issuer (the JWTs' iss claim)."})
    if client.jwks is None and not client.jwks_url:
        raise ValidationError("Give the EHR's public keys: a JWKS, a JWKS URL, or both.")
    if client.clinician_id is not None and not is_clinician(client.clinician):
        raise ValidationError(
            {"clinician": "The client acts as this user: choose an active clinician."}
        )


@transaction.atomic
def register_client(
    *,
    name: str,
    issuer: str,
    clinician,
    jwks: Any = None,
    jwks_url: str = "",
    allowed_origins: Any = None,
    fhir_servers: Any = None,
) -> CdsClient:
    """A new client, or the one of ``issuer`` updated with these fields."""
    client = CdsClient.objects.filter(issuer=issuer).first() or CdsClient(issuer=issuer)
    client.name = name
    client.clinician = clinician
    client.jwks = jwks
    client.jwks_url = jwks_url
    client.allowed_origins = allowed_origins or []
    client.fhir_servers = fhir_servers or []
    clean_client(client)
    client.full_clean()
    client.save()
    return client
