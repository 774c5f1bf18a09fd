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
    """With the only slot taken, a sign-in gets 503 + Retry-After (3 to 6 s) and the form
    asking to retry in as many seconds, the username kept; once free, it signs in."""
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
    wait = int(busy["Retry-After"])
    assert 3 <= wait <= 6  # the setting to twice it: a crowd does not come back at once
    page = " ".join(busy.content.decode().split())
    assert "Too many people are signing in at this moment." in page
    assert (
        f"Wait {wait} seconds, then enter your password and press <em>Sign in</em> again." in page
    )
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


def test_the_low_priority_hasher_makes_djangos_own_pbkdf2_hashes(settings):
    """The same string as Django's PBKDF2 for a salt (stored passwords unchanged), each way
    verified by the other, computed on a thread whose nice is raised by SIGN_IN_HASH_NICE and
    whose scheduling policy is SCHED_IDLE (a step preempts it at once)."""
    import os

    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    from diagnosis import hashers

    settings.SIGN_IN_HASH_NICE = 10
    ours, django_s = hashers.LowPriorityPBKDF2PasswordHasher(), PBKDF2PasswordHasher()
    assert ours.algorithm == django_s.algorithm == "pbkdf2_sha256"
    encoded = ours.encode("a password", "somesalt", 1000)
    assert encoded == django_s.encode("a password", "somesalt", 1000)
    assert django_s.verify("a password", encoded) and ours.verify("a password", encoded)
    assert not ours.verify("another", encoded)
    assert ours.verify("x", django_s.encode("x", "othersalt", 1200))
    own = os.getpriority(os.PRIO_PROCESS, 0)
    nice = hashers._hashing_pool().submit(
        lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    )
    assert nice.result(timeout=10) == min(own + 10, 19)
    policy = hashers._hashing_pool().submit(
        lambda: os.sched_getscheduler(threading.get_native_id())
    )
    assert policy.result(timeout=10) == os.SCHED_IDLE
    assert os.sched_getscheduler(threading.get_native_id()) != os.SCHED_IDLE  # ours untouched
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == own  # ours untouched
