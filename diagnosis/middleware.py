"""Response headers every page and API answer carries (static files never reach this), and a
request run once more when its database connection was lost."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError, connection
from django.http import HttpRequest, HttpResponse
from django.utils.cache import add_never_cache_headers, patch_cache_control

logger = logging.getLogger(__name__)

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


# ------------------------------------------------------------ lost database connections
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_READS = ("SELECT", "SHOW", "SET", "SAVEPOINT", "RELEASE", "ROLLBACK")


def connection_lost(exc: BaseException) -> bool:
    """``exc`` is the database connection having gone (a restarted or terminated server
    process, a dropped network link), not a fault of the request.

    Told by the error itself: by the time it is handled, Django has already opened a new
    connection (leaving a transaction reconnects).  PostgreSQL names a lost connection by
    SQLSTATE class 08 (connection exception) or 57P (the server shutting down or starting);
    an error with no SQLSTATE was raised by the client library (no answer, refused).
    """
    if isinstance(exc, InterfaceError):  # "connection already closed"
        return True
    if not isinstance(exc, OperationalError):
        return False
    cause = exc.__cause__
    sqlstate = getattr(cause, "sqlstate", None) or getattr(cause, "pgcode", None)
    return sqlstate is None or sqlstate.startswith(("08", "57P"))


class _WriteWatch:
    """Watches a request's statements (a ``connection.execute_wrapper``) for what would make
    running the request again unsafe: a write that may have been committed.

    A write outside a transaction commits at once.  A write inside one is pending until that
    transaction ends; once a later statement runs outside it, or starts another transaction,
    it is taken as committed (it may have been).  A failure inside a statement of the
    transaction still holding the writes rolls them back (the server aborts a transaction
    with its connection), so they never committed; a failure at COMMIT itself is not a
    statement and leaves ``failed_in_statement`` false: the commit may have happened, and the
    request is not run again.
    """

    def __init__(self) -> None:
        self.committed = False
        self.pending = False
        self.failed_in_statement = False

    def __call__(self, execute, sql, params, many, context):
        db = context["connection"]
        if self.pending and (not db.in_atomic_block or _starts_a_transaction(db)):
            self.committed, self.pending = True, False
        if not str(sql).lstrip().upper().startswith(_READS):
            if db.in_atomic_block:
                self.pending = True
            else:
                self.committed = True  # autocommit: it may be in before the answer is lost
        self.failed_in_statement = False
        try:
            return execute(sql, params, many, context)
        except Exception:
            self.failed_in_statement = True
            raise


def _starts_a_transaction(db) -> bool:
    """The next statement on ``db`` begins a new transaction (the server holds none open);
    True when the driver cannot say (psycopg 3 can), which is the safe answer."""
    status = getattr(getattr(db.connection, "info", None), "transaction_status", None)
    return status is None or status.name == "IDLE"


class DatabaseRetryMiddleware:
    """A request whose database connection was lost runs once more on a new connection when
    that does nothing twice: a read (GET, HEAD), or a step whose statements so far committed
    nothing (its transaction died with the connection).

    Anything else goes on to ``handler500`` (``diagnosis.views.errors``), which answers 503
    with ``Retry-After``: JSON under ``/api/``, a page for people elsewhere.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        watch = _WriteWatch()
        request._database_writes = watch
        with connection.execute_wrapper(watch):
            return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception):
        if getattr(request, "_database_retried", False) or not connection_lost(exception):
            return None
        watch: _WriteWatch | None = getattr(request, "_database_writes", None)
        if request.method not in SAFE_METHODS and (
            watch is None or watch.committed or not watch.failed_in_statement
        ):
            return None
        match = request.resolver_match
        if match is None or connection.in_atomic_block:  # a caller's transaction is still open
            return None
        request._database_retried = True
        logger.warning(
            "Lost the database connection during %s %s (%s); running it once more.",
            request.method,
            request.path,
            exception,
        )
        connection.close()  # the next query opens a new one
        return match.func(request, *match.args, **match.kwargs)
