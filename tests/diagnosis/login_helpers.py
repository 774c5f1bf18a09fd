"""A sign-in request for tests that check real passwords.

django-axes counts wrong passwords per username and address, so it needs the request that
carries them; the test client's ``login`` and a bare ``authenticate`` have none of their own.
"""

from __future__ import annotations

from django.http import HttpRequest
from django.test import RequestFactory


def login_request() -> HttpRequest:
    """A POST to the sign-in page from 127.0.0.1, as a browser's would be."""
    return RequestFactory().post("/accounts/login/", REMOTE_ADDR="127.0.0.1")
