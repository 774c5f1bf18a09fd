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


def log_in(page, username: str, password: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/")
