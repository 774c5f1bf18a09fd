"""Sign-ins beyond the few a web process hashes at once get a clear 503 at once, never a hang."""

from __future__ import annotations

import threading
import time

import pytest
from django.urls import reverse

from diagnosis.middleware import SignInGate, reset_sign_in_gate, sign_in_gate

PASSWORD = "pw-for-tests-123"  # the password tests/diagnosis/conftest.py gives every user


@pytest.fixture
def one_at_a_time(settings):
    settings.SIGN_IN_CONCURRENCY = 1
    settings.SIGN_IN_QUEUE = 0
    settings.SIGN_IN_WAIT_SECONDS = 0.2
    settings.SIGN_IN_RETRY_AFTER_SECONDS = 3
    reset_sign_in_gate()
    yield sign_in_gate()
    reset_sign_in_gate()


def test_the_gate_lets_in_the_active_lets_the_queue_wait_and_refuses_the_rest():
    """The active enter at once, the waiting wait for a leave, any more are refused at once."""
    gate = SignInGate(active=1, waiting=1, wait_seconds=5)
    assert gate.enter()
    got: list[bool] = []
    waiter = threading.Thread(target=lambda: got.append(gate.enter()))
    waiter.start()
    time.sleep(0.2)
    started = time.perf_counter()
    assert not gate.enter()  # one hashing and one waiting: a third is refused at once
    assert time.perf_counter() - started < 0.1
    gate.leave()
    waiter.join(timeout=5)
    assert got == [True]
    gate.leave()
    assert gate.enter()  # everything released: the gate is free again
    gate.leave()


def test_a_waiting_sign_in_gives_up_after_the_wait():
    """A sign-in waiting for a turn is refused once SIGN_IN_WAIT_SECONDS pass, not held forever."""
    gate = SignInGate(active=1, waiting=3, wait_seconds=0.3)
    assert gate.enter()
    started = time.perf_counter()
    assert not gate.enter()
    assert 0.25 < time.perf_counter() - started < 2
    gate.leave()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url_name", "who"), [("login", "clinician"), ("admin:login", "model_admin")]
)
def test_a_sign_in_over_the_limit_is_told_to_try_again_in_a_few_seconds(
    client, request, one_at_a_time, url_name, who
):
    """With the only slot taken, a sign-in gets 503 + Retry-After and the form asking to retry."""
    clinician = request.getfixturevalue(who)
    assert one_at_a_time.enter()  # another sign-in is hashing its password
    started = time.perf_counter()
    try:
        busy = client.post(
            reverse(url_name),
            {"username": clinician.username, "password": PASSWORD, "next": "/cases/"},
        )
    finally:
        one_at_a_time.leave()
    assert time.perf_counter() - started < 3  # the short wait, then an answer: no hang
    assert busy.status_code == 503
    assert busy["Retry-After"] == "3"
    page = " ".join(busy.content.decode().split())
    assert "Too many people are signing in at this moment." in page
    assert "Wait 3 seconds, then enter your password and press <em>Sign in</em> again." in page
    assert f'value="{clinician.username}"' in page  # the username is kept
    assert 'name="next" value="/cases/"' in page
    assert "_auth_user_id" not in client.session
    # the slot is free again: the same sign-in now succeeds
    again = client.post(reverse(url_name), {"username": clinician.username, "password": PASSWORD})
    assert again.status_code == 302
    assert "_auth_user_id" in client.session


@pytest.mark.django_db
def test_pages_and_steps_are_never_held_by_the_sign_in_limit(client, clinician, one_at_a_time):
    """While every sign-in slot is taken, signed-in pages and other POSTs answer as usual."""
    client.force_login(clinician)
    assert one_at_a_time.enter()
    try:
        assert client.get(reverse("home")).status_code == 200
        assert client.get(reverse("login")).status_code in (200, 302)
        # a POST elsewhere (the session API) is not counted as a sign-in
        answer = client.post("/api/cases/999999/step", {}, content_type="application/json")
        assert answer.status_code != 503
    finally:
        one_at_a_time.leave()
