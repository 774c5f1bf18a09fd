"""Lockouts nobody can turn on others: behind a trusted reverse proxy the client address is
the right-most untrusted X-Forwarded-For entry (DJANGO_TRUSTED_PROXIES), and a stranger's bad
tokens and wrong passwords lock out no one else."""

from __future__ import annotations

import secrets

import pytest
from django.conf import settings as django_settings
from django.test import Client, RequestFactory
from django.urls import reverse

from diagnosis.client_address import client_address
from diagnosis.integration.services.api_tokens import issue_api_token

PROXY = "10.99.0.1"
PASSWORD = "pw-for-tests-123"  # the password tests/diagnosis/conftest.py gives every user


def _fresh_address() -> str:
    """A client address of this run only (the counts live in Redis and in the process)."""
    return f"198.18.{secrets.randbelow(250)}.{secrets.randbelow(250) + 1}"


@pytest.mark.parametrize(
    ("trusted", "peer", "forwarded", "expected"),
    [
        ([], "203.0.113.5", "198.51.100.7", "203.0.113.5"),  # no proxy configured: the peer
        ([PROXY], "203.0.113.5", "198.51.100.7", "203.0.113.5"),  # untrusted peer: the peer
        ([PROXY], PROXY, "198.51.100.7", "198.51.100.7"),
        ([PROXY], PROXY, "6.6.6.6, 198.51.100.7", "198.51.100.7"),  # client-written left part
        (["10.99.0.0/24"], PROXY, "198.51.100.7, 10.99.0.9", "198.51.100.7"),  # two proxies
        ([PROXY], PROXY, "not-an-address", PROXY),  # damaged header: never a made-up address
        ([PROXY], PROXY, "", PROXY),
    ],
)
def test_the_client_address_trusts_the_header_only_from_a_trusted_proxy(
    settings, trusted, peer, forwarded, expected
):
    """X-Forwarded-For is read only from a configured proxy, from the right."""
    settings.TRUSTED_PROXIES = trusted
    request = RequestFactory().get("/", REMOTE_ADDR=peer, HTTP_X_FORWARDED_FOR=forwarded)
    assert client_address(request) == expected


def _via_proxy(address: str, **headers) -> dict:
    return {"REMOTE_ADDR": PROXY, "HTTP_X_FORWARDED_FOR": address, **headers}


def test_a_strangers_bad_tokens_behind_the_proxy_lock_out_only_the_stranger(clinician, settings):
    """Past API_BAD_TOKEN_LIMIT a stranger's address gets 429, even posing as a colleague in
    the header's left part; the colleague behind the same proxy keeps getting 200."""
    settings.TRUSTED_PROXIES = [PROXY]
    settings.API_BAD_TOKEN_LIMIT = "3/m"
    stranger, colleague = _fresh_address(), _fresh_address()
    posing = f"{colleague}, {stranger}"  # the proxy appends the real peer last
    answers = [
        Client(HTTP_AUTHORIZATION=f"Bearer cad_guess-{n}", **_via_proxy(posing)).get(
            "/api/v1/models"
        )
        for n in range(4)
    ]
    assert [a.status_code for a in answers] == [401, 401, 401, 429]
    _, plain = issue_api_token(issuer=clinician, owner=clinician, name="EHR")
    good = Client(HTTP_AUTHORIZATION=f"Bearer {plain}")
    assert good.get("/api/v1/models", **_via_proxy(colleague)).status_code == 200
    assert good.get("/api/v1/models", **_via_proxy(stranger)).status_code == 429


def test_a_strangers_wrong_passwords_lock_out_only_the_stranger(client, clinician, settings):
    """Five wrong passwords for a colleague's username from a stranger's address (behind the
    proxy) lock that username from that address only: the colleague signs in from theirs."""
    settings.TRUSTED_PROXIES = [PROXY]
    stranger, colleague = _fresh_address(), _fresh_address()
    login = reverse("login")
    for _ in range(django_settings.AXES_FAILURE_LIMIT):
        Client().post(
            login, {"username": clinician.username, "password": "wrong"}, **_via_proxy(stranger)
        )
    locked = Client().post(
        login, {"username": clinician.username, "password": PASSWORD}, **_via_proxy(stranger)
    )
    assert locked.status_code == 429
    mine = Client().post(
        login,
        {"username": clinician.username, "password": PASSWORD},
        **_via_proxy(f"{stranger}, {colleague}"),  # the stranger's address written on the left
    )
    assert mine.status_code == 302
