"""CDS Hooks security over HTTP on a live server: the EHR's JWT verified against its JWKS
(inline, or served by a real HTTP server), each refusal the spec asks for, and CORS for the
registered origins only."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from cds_helpers import (
    ISSUER,
    ORIGIN,
    LocalServer,
    call,
    code_toy_dataset,
    hook_body,
    new_key,
    public_jwks,
    register,
    sign,
)

from diagnosis.clinic.models import DiagnosisCase
from diagnosis.integration.models import SeenJti

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def ehr(transactional_db, clinician, trained_model, live_server):
    code_toy_dataset(trained_model.dataset)
    key = new_key()
    client = register(clinician, key)
    return SimpleNamespace(
        key=key,
        client=client,
        base=live_server.url,
        discovery=live_server.url + "/cds-services",
        service=f"/cds-services/cost-aware-model-{trained_model.pk}",
    )


def refused(answer, status: int, words: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.headers["Content-Type"] == "application/json"
    assert words in answer.json()["error"]


def test_a_good_token_is_accepted(ehr):
    """The baseline the refusals below differ from: a fresh, signed, addressed token."""
    assert call(ehr.base, "/cds-services", ehr.key).status_code == 200


def test_no_token_or_not_a_jwt_is_401(ehr):
    """No Authorization header, another scheme, or a bearer that is not a JWT: 401."""
    import requests

    refused(requests.get(ehr.discovery, timeout=10), 401, "Authorization: Bearer")
    basic = requests.get(ehr.discovery, headers={"Authorization": "Basic eDp5"}, timeout=10)
    refused(basic, 401, "Authorization: Bearer")
    refused(call(ehr.base, "/cds-services", ehr.key, token="not.a.jwt"), 401, "not a JWT")


def test_a_bad_signature_is_401(ehr):
    """A token signed by a key the client did not register (same kid) is refused."""
    impostor = new_key(kid=ehr.key.kid)
    token = sign(impostor, aud=ehr.discovery)
    refused(call(ehr.base, "/cds-services", ehr.key, token=token), 401, "signature")


def test_an_expired_token_is_401(ehr):
    """exp in the past (beyond the leeway) is refused."""
    now = int(time.time())
    token = sign(ehr.key, aud=ehr.discovery, iat=now - 600, exp=now - 120)
    refused(call(ehr.base, "/cds-services", ehr.key, token=token), 401, "expired")


def test_a_wrong_audience_is_401(ehr):
    """A token addressed to another service is refused."""
    token = sign(ehr.key, aud="https://other.example/cds-services")
    refused(call(ehr.base, "/cds-services", ehr.key, token=token), 401, "audience")


def test_a_token_for_another_endpoint_of_ours_is_refused_at_a_hook(ehr):
    """A token whose aud is a different service's URL cannot call this hook."""
    token = sign(ehr.key, aud=ehr.base + "/cds-services/cost-aware-model-999999")
    answer = call(ehr.base, ehr.service, ehr.key, hook_body(), token=token)
    refused(answer, 401, "audience")
    assert DiagnosisCase.objects.count() == 0


def test_a_replayed_jti_is_401(ehr):
    """The same token twice: the first call is answered, the second refused (jti kept until
    the token expires)."""
    token = sign(ehr.key, aud=ehr.discovery)
    assert call(ehr.base, "/cds-services", ehr.key, token=token).status_code == 200
    refused(call(ehr.base, "/cds-services", ehr.key, token=token), 401, "replayed")
    assert SeenJti.objects.filter(client=ehr.client).count() == 1


def test_an_unknown_issuer_missing_claims_or_a_long_life_are_401(ehr):
    """An issuer nobody registered, a token without jti, or one living past the limit."""
    stranger = sign(ehr.key, aud=ehr.discovery, iss="https://stranger.example")
    refused(call(ehr.base, "/cds-services", ehr.key, token=stranger), 401, "not a registered")
    no_jti = sign(ehr.key, aud=ehr.discovery, jti=None)
    refused(call(ehr.base, "/cds-services", ehr.key, token=no_jti), 401, "jti")
    forever = sign(ehr.key, aud=ehr.discovery, exp=int(time.time()) + 86400)
    refused(call(ehr.base, "/cds-services", ehr.key, token=forever), 401, "too long")


def test_a_switched_off_client_is_403(ehr):
    """A client an admin deactivated is known but refused: 403."""
    ehr.client.active = False
    ehr.client.save()
    refused(call(ehr.base, "/cds-services", ehr.key), 403, "switched off")


def test_a_client_whose_user_is_no_longer_a_clinician_is_403(ehr, clinician):
    """The account a client acts as left the clinicians group: its calls are refused (403
    JSON), never answered with that account's former rights."""
    clinician.groups.clear()
    refused(call(ehr.base, "/cds-services", ehr.key), 403, "")
    answer = call(ehr.base, ehr.service, ehr.key, hook_body())
    refused(answer, 403, "")
    assert DiagnosisCase.objects.count() == 0


def test_keys_served_at_a_jwks_url_verify_and_a_rotated_key_is_fetched(
    transactional_db, clinician, trained_model, live_server
):
    """A client registered with a jwks_url only: its JWKS is read from a real HTTP server, and
    a token signed with a key added later (a new kid) makes the service read it again."""
    first, second = new_key(kid="k1"), new_key("RSA", kid="k2")
    with LocalServer() as ehr_server:
        ehr_server.routes["/jwks"] = (200, public_jwks(first))
        register(clinician, jwks_url=ehr_server.url + "/jwks")
        url = live_server.url + "/cds-services"
        assert call(live_server.url, "/cds-services", first).status_code == 200
        assert call(live_server.url, "/cds-services", first).status_code == 200
        assert len(ehr_server.seen) == 1  # the keys were kept between calls
        ehr_server.routes["/jwks"] = (200, public_jwks(first, second))
        answer = call(live_server.url, "/cds-services", second, token=sign(second, aud=url))
        assert answer.status_code == 200, answer.text
        assert len(ehr_server.seen) == 2
        stranger = new_key(kid="k3")
        refused(call(live_server.url, "/cds-services", stranger), 401, "signature")


def test_a_jwks_url_that_does_not_answer_is_401(transactional_db, clinician, live_server):
    """Keys that cannot be read refuse the call (never a 500)."""
    with LocalServer() as ehr_server:
        register(clinician, jwks_url=ehr_server.url + "/missing")
        refused(call(live_server.url, "/cds-services", new_key()), 401, "could not be read")


def test_cors_answers_registered_origins_only(ehr):
    """A preflight from the EHR's origin is allowed (methods, headers); from another origin it
    is refused without CORS headers; answers carry the client's origin only."""
    import requests

    preflight = requests.options(
        ehr.base + ehr.service,
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
        timeout=10,
    )
    assert preflight.status_code == 204
    assert preflight.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
    assert "Authorization" in preflight.headers["Access-Control-Allow-Headers"]
    other = requests.options(
        ehr.base + ehr.service,
        headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"},
        timeout=10,
    )
    assert other.status_code == 403 and "Access-Control-Allow-Origin" not in other.headers
    answer = call(ehr.base, "/cds-services", ehr.key, Origin=ORIGIN)
    assert answer.headers["Access-Control-Allow-Origin"] == ORIGIN
    elsewhere = call(ehr.base, "/cds-services", ehr.key, Origin="https://evil.example")
    assert elsewhere.status_code == 200
    assert "Access-Control-Allow-Origin" not in elsewhere.headers


def test_a_fhir_server_the_client_did_not_register_is_403_and_never_fetched(ehr):
    """fhirServer must be one of the client's registered FHIR bases: another host, port, path,
    a look-alike with a user part, or any URL when none is registered is refused with 403 JSON
    before the service sends a single request there, and nothing is saved."""
    with LocalServer() as fhir_server:
        fhir_server.routes["/Observation"] = (200, {"resourceType": "Bundle", "type": "searchset"})
        fhir_server.routes["/fhir/Observation"] = fhir_server.routes["/Observation"]
        host_port = fhir_server.url.removeprefix("http://")
        unregistered = call(
            ehr.base, ehr.service, ehr.key, hook_body(prefetch=False, fhirServer=fhir_server.url)
        )
        refused(unregistered, 403, "not a FHIR server registered for this client")
        ehr.client.fhir_servers = [fhir_server.url + "/fhir"]
        ehr.client.save()
        for other in [
            fhir_server.url,  # the same host, another path
            fhir_server.url + "/fhir/admin",  # below the registered base
            fhir_server.url + "/fhirx",
            f"http://localhost:{fhir_server.httpd.server_address[1]}/fhir",  # another host name
            f"http://{host_port}@127.0.0.2:1/fhir",  # a user part hiding the real host
            f"https://{host_port}/fhir",  # another scheme
            fhir_server.url + "/fhir?x=1",
        ]:
            with_prefetch = hook_body(fhirServer=other)  # refused even when it is not needed
            for body in (hook_body(prefetch=False, fhirServer=other), with_prefetch):
                answer = call(ehr.base, ehr.service, ehr.key, body)
                refused(answer, 403, "not a FHIR server registered")
        assert fhir_server.seen == []
        assert DiagnosisCase.objects.count() == 0
        allowed = call(
            ehr.base,
            ehr.service,
            ehr.key,
            hook_body(prefetch=False, fhirServer=fhir_server.url + "/fhir/"),
        )
        assert allowed.status_code == 200, allowed.text
        assert [path.split("?")[0] for path, _ in fhir_server.seen] == ["/fhir/Observation"]


def test_registration_refuses_private_keys_and_non_clinicians(db, clinician, model_admin):
    """The JWKS must hold public keys only, and the client must act as a clinician."""
    from django.core.exceptions import ValidationError

    from diagnosis.integration.services.cds_clients import register_client

    key = new_key()
    with pytest.raises(ValidationError, match="private"):
        register_client(
            name="x", issuer=ISSUER, clinician=clinician, jwks={"keys": [key.as_dict(private=True)]}
        )
    with pytest.raises(ValidationError, match="clinician"):
        register_client(name="x", issuer=ISSUER, clinician=model_admin, jwks=public_jwks(key))
    with pytest.raises(ValidationError, match="not an origin"):
        register(clinician, key, origins=["https://ehr.example/path"])
    for bad in ["ftp://ehr.example/fhir", "https://u:p@ehr.example/fhir", "https://e/f?q=1"]:
        with pytest.raises(ValidationError, match="not a FHIR base URL"):
            register(clinician, key, fhir_servers=[bad])


def test_the_cds_client_command_registers_an_ehr(db, clinician, tmp_path):
    """manage.py cds_client reads the JWKS file and registers the issuer as the clinician."""
    import json

    from django.core.management import call_command

    from diagnosis.integration.models import CdsClient

    keys = tmp_path / "jwks.json"
    keys.write_text(json.dumps(public_jwks(new_key(kid="a"))))
    call_command(
        "cds_client",
        "--name", "Ward EHR",
        "--issuer", ISSUER,
        "--clinician", clinician.username,
        "--jwks-file", str(keys),
        "--origin", "https://EHR.example:8443",
        "--fhir-server", "https://EHR.example:8443/fhir/r4/",
    )  # fmt: skip
    client = CdsClient.objects.get(issuer=ISSUER)
    assert (client.name, client.clinician, client.allowed_origins) == (
        "Ward EHR",
        clinician,
        ["https://ehr.example:8443"],
    )
    assert client.jwks["keys"][0]["kid"] == "a"
    assert client.fhir_servers == ["https://ehr.example:8443/fhir/r4"]


def test_expired_jtis_are_deleted_after_a_call_at_most_once_a_minute(ehr):
    """A client's expired jti rows go after the first call (after its commit), not after
    every call: the next call within SWEEP_EVERY leaves a newly expired row, the first call
    after it deletes it; the calls' own jtis stay until they expire."""
    from datetime import timedelta

    from django.utils import timezone

    from diagnosis.integration.services import cds_auth

    def expired(jti: str) -> SeenJti:
        past = timezone.now() - timedelta(minutes=1)
        return SeenJti.objects.create(client=ehr.client, jti=jti, expires_at=past)

    def remaining() -> set[str]:
        return set(SeenJti.objects.filter(client=ehr.client).values_list("jti", flat=True))

    cds_auth._swept_at.pop(ehr.client.pk, None)
    expired("old-1")
    assert call(ehr.base, "/cds-services", ehr.key).status_code == 200
    assert "old-1" not in remaining() and len(remaining()) == 1
    expired("old-2")
    assert call(ehr.base, "/cds-services", ehr.key).status_code == 200
    assert "old-2" in remaining() and len(remaining()) == 3
    cds_auth._swept_at[ehr.client.pk] -= cds_auth.SWEEP_EVERY + 1  # a minute has passed
    assert call(ehr.base, "/cds-services", ehr.key).status_code == 200
    assert "old-2" not in remaining() and len(remaining()) == 3
