"""Response headers every page and API answer carries (static files never reach this)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.cache import add_never_cache_headers, patch_cache_control

# Features the product never uses, denied to every page and anything it might embed.
PERMISSIONS_POLICY = ", ".join(
    f"{feature}=()"
    for feature in (
        "accelerometer",
        "camera",
        "display-capture",
        "geolocation",
        "gyroscope",
        "magnetometer",
        "microphone",
        "payment",
        "usb",
    )
)

# Scripts only from this server's own files (no inline script, no eval, no CDN); the JSON that
# charts read sits in <script type="application/json"> data blocks, which never run. Inline
# styles stay allowed: plotly.js and Django's admin set style attributes.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)


class PrivateResponseMiddleware:
    """Patient pages and JSON are private (never stored by a browser or a shared cache), and
    every page runs only the scripts this server ships (Content-Security-Policy).

    WhiteNoise answers static files before this runs, so their long caching is untouched.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        add_never_cache_headers(response)
        patch_cache_control(response, no_store=True, private=True)
        response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response
