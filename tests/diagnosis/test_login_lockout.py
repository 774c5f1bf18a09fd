"""Wrong passwords lock a username out for a while (django-axes), on both sign-in pages."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse

PASSWORD = "pw-for-tests-123"  # the password tests/diagnosis/conftest.py gives every user


def sign_in(client, url: str, username: str, password: str):
    return client.post(url, {"username": username, "password": password}, REMOTE_ADDR="10.1.2.3")


def test_the_right_password_is_refused_after_too_many_wrong_ones(client, clinician):
    """The AXES_FAILURE_LIMIT-th wrong password locks; then even the right one gets a 429 page."""
    login = reverse("login")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in(client, login, clinician.username, "wrong").status_code == 200
    assert sign_in(client, login, clinician.username, "wrong").status_code == 429
    locked = sign_in(client, login, clinician.username, PASSWORD)
    assert locked.status_code == 429
    assert "Sign-in locked" in locked.content.decode()
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    assert f"locked for {minutes} minutes" in " ".join(locked.content.decode().split())
    assert "_auth_user_id" not in client.session


def test_a_right_password_before_the_limit_signs_in_and_resets_the_count(client, clinician):
    """One wrong password fewer than the limit still lets the right one in, and clears the count."""
    login = reverse("login")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in(client, login, clinician.username, "wrong")
    assert sign_in(client, login, clinician.username, PASSWORD).status_code == 302
    client.logout()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in(client, login, clinician.username, "wrong")
    assert sign_in(client, login, clinician.username, PASSWORD).status_code == 302


def test_the_admin_sign_in_is_locked_out_too(client, model_admin):
    """The admin site's own login form counts wrong passwords the same way."""
    login = reverse("admin:login")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, login, model_admin.username, "wrong")
    assert sign_in(client, login, model_admin.username, PASSWORD).status_code == 429


def test_a_lock_out_is_per_username_so_colleagues_can_still_sign_in(
    client, clinician, other_clinician
):
    """Locking one username out from an address leaves another user at that address alone."""
    login = reverse("login")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        sign_in(client, login, clinician.username, "wrong")
    assert sign_in(client, login, other_clinician.username, PASSWORD).status_code == 302
