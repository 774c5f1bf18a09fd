"""Helpers shared by the browser tests (imported as a plain module: tests/ has no packages)."""

from __future__ import annotations

import os

CLINICIAN = ("clinician", os.environ.get("DEMO_CLINICIAN_PASSWORD", "clinician-demo"))
ADMIN = ("admin", os.environ.get("DEMO_ADMIN_PASSWORD", "admin-demo"))


def new_page(chromium, live_server, *, width=1366, height=768):
    context = chromium.new_context(
        viewport={"width": width, "height": height}, base_url=live_server.url
    )
    context.set_default_timeout(15000)
    return context, context.new_page()


def focused_after_load(page):
    """The element in focus once the browser has applied ``autofocus``.

    Chromium applies autofocus at its next rendering update, which may come after the load
    event that ``goto``/``expect_navigation`` wait for; reading ``activeElement`` at once then
    races it.  This waits (up to the page's timeout) for some element other than the body to
    hold the focus, and returns its handle; a page that never focuses anything still fails.
    """
    page.wait_for_function(
        "document.activeElement !== null && document.activeElement !== document.body"
    )
    return page.evaluate_handle("document.activeElement")


def log_in(page, username: str, password: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/")


#: Why the browser tests' models are approved (a flagged model needs a reason to be approved).
BROWSER_APPROVAL_REASON = "Approved by the browser test set-up for its clinicians."


def approve_for_clinicians(trained):
    """``trained`` approved by the demo model admin through the approval service (as on its
    model card), so the demo clinician sees it: every new training is a draft."""
    from django.contrib.auth.models import User

    from diagnosis.training.services.approval import approve_model

    admin = User.objects.get(username=ADMIN[0])
    return approve_model(user=admin, trained_model=trained, reason=BROWSER_APPROVAL_REASON)
