"""Response headers every page and API answer carries (static files never reach this), a
request run once more when its database connection was lost, and a limit on sign-ins at once."""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable

from django.conf import settings
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
        # a mark on the request, as Django's own middleware set theirs; the stubs declare none
        request._database_writes = watch  # type: ignore[attr-defined]
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
        request._database_retried = True  # type: ignore[attr-defined]  # a mark, as above
        logger.warning(
            "Lost the database connection during %s %s (%s); running it once more.",
            request.method,
            request.path,
            exception,
        )
        connection.close()  # the next query opens a new one
        return match.func(request, *match.args, **match.kwargs)


# ------------------------------------------------------------------ sign-ins at once
class SignInGate:
    """How many sign-ins one web process works on at once.

    A sign-in hashes its password (PBKDF2: about half a second of CPU).  ``active`` may hash
    at the same time; ``waiting`` more wait up to ``wait_seconds`` for one of them to finish;
    any other is refused at once.  So sign-ins never hold more than ``active + waiting`` of the
    process's threads, and steps always find one free.
    """

    def __init__(self, *, active: int, waiting: int, wait_seconds: float) -> None:
        self.active = max(int(active), 1)
        self.most = self.active + max(int(waiting), 0)
        self.wait_seconds = max(float(wait_seconds), 0.0)
        self._slots = threading.BoundedSemaphore(self.active)
        self._lock = threading.Lock()
        self._inside = 0

    def enter(self) -> bool:
        """Take a hashing slot (True), or refuse (False): too many inside, or the wait ran out.
        After True the caller must call :meth:`leave`."""
        with self._lock:
            if self._inside >= self.most:
                return False
            self._inside += 1
        if self._slots.acquire(timeout=self.wait_seconds):
            return True
        with self._lock:
            self._inside -= 1
        return False

    def leave(self) -> None:
        self._slots.release()
        with self._lock:
            self._inside -= 1


_gate: SignInGate | None = None
_gate_lock = threading.Lock()


def sign_in_gate() -> SignInGate:
    """This process's gate, sized by the settings ``SIGN_IN_CONCURRENCY``, ``SIGN_IN_QUEUE``
    and ``SIGN_IN_WAIT_SECONDS`` when first used."""
    global _gate
    with _gate_lock:
        if _gate is None:
            _gate = SignInGate(
                active=settings.SIGN_IN_CONCURRENCY,
                waiting=settings.SIGN_IN_QUEUE,
                wait_seconds=settings.SIGN_IN_WAIT_SECONDS,
            )
        return _gate


def reset_sign_in_gate() -> None:
    """Forget the gate, so the next sign-in sizes a new one from the settings (tests)."""
    global _gate
    with _gate_lock:
        _gate = None


def _sign_in_paths() -> frozenset[str]:
    from django.urls import reverse

    return frozenset({reverse("login"), reverse("admin:login")})


class SignInLimitMiddleware:
    """A sign-in (the POST of the login form or the admin's) passes :class:`SignInGate`; one it
    refuses is answered at once with 503, ``Retry-After`` and the sign-in page saying that too
    many people are signing in and to press "Sign in" again in a few seconds (``Retry-After``:
    ``SIGN_IN_RETRY_AFTER_SECONDS`` to twice that, at random).

    Nothing else is limited: pages, steps and API calls never wait for a sign-in.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self._paths: frozenset[str] | None = None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method != "POST":
            return self.get_response(request)
        if self._paths is None:
            self._paths = _sign_in_paths()
        if request.path not in self._paths:
            return self.get_response(request)
        gate = sign_in_gate()
        if not gate.enter():
            logger.warning("Sign-in refused: %d already being worked on here.", gate.most)
            return self._busy(request)
        try:
            return self.get_response(request)
        finally:
            gate.leave()

    @staticmethod
    def _busy(request: HttpRequest) -> HttpResponse:
        from django.template.response import TemplateResponse

        # Between the setting and twice it, at random: a crowd told to come back all at the same
        # second would come back as the same crowd.
        base = max(int(round(settings.SIGN_IN_RETRY_AFTER_SECONDS)), 1)
        retry_after = base + random.randint(0, base)
        response = TemplateResponse(
            request,
            "registration/sign_in_busy.html",
            {
                "retry_after": retry_after,
                "username": str(request.POST.get("username", ""))[:150],
                "next": str(request.POST.get("next", ""))[:2000],
                "action": request.path,
            },
            status=503,
        )
        response["Retry-After"] = str(retry_after)
        return response.render()
