"""Progress and liveness of a running training, written to the database sparingly."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from django.db import close_old_connections, connection
from django.utils import timezone

from ..models import TrainedModel

#: Seconds between progress writes, and between heartbeats while a fit runs.
WRITE_INTERVAL = 2.0
HEARTBEAT_INTERVAL = 10.0


class ProgressWriter:
    """Callable ``(fraction, message)`` that stores at most one update per interval."""

    def __init__(
        self, trained_model_id: int, *, callback: Callable[[float, str], None] | None = None
    ):
        self.trained_model_id = trained_model_id
        self.callback = callback
        self._last_write = 0.0

    def __call__(self, fraction: float, message: str = "", *, force: bool = False) -> None:
        fraction = min(max(float(fraction), 0.0), 1.0)
        if self.callback is not None:
            self.callback(fraction, message)
        now = time.monotonic()
        if not force and now - self._last_write < WRITE_INTERVAL:
            return
        self._last_write = now
        TrainedModel.objects.filter(pk=self.trained_model_id, status=TrainedModel.RUNNING).update(
            progress=fraction, progress_message=message[:300], heartbeat_at=timezone.now()
        )


class Heartbeat:
    """Context manager: a thread refreshes ``heartbeat_at`` while a long fit runs.

    ``beat`` replaces the training's refresh (an experiment task beats its own row).
    """

    def __init__(
        self,
        trained_model_id: int | None,
        interval: float = HEARTBEAT_INTERVAL,
        *,
        beat: Callable[[], None] | None = None,
    ):
        self.trained_model_id = trained_model_id
        self.interval = interval
        self.beat = beat
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="training-heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        # Inside a transaction (a TestCase) another connection could block on our row lock.
        if not connection.in_atomic_block:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.interval + 5)

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                if self.beat is not None:
                    self.beat()
                    continue
                # with no ``beat`` there is a training; pk=None would be Django's IS NULL (no
                # row), which django-stubs' lookup type omits
                TrainedModel.objects.filter(
                    pk=self.trained_model_id,  # type: ignore[misc]
                    status=TrainedModel.RUNNING,
                ).update(heartbeat_at=timezone.now())
        finally:
            close_old_connections()
            connection.close()
