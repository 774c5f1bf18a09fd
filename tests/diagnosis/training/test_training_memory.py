"""The worker protects the machine: a training over the memory limit fails with a reason, before
it starts where the estimate sees it, and by a MemoryError under the address-space limit else."""

from __future__ import annotations

import resource

import numpy as np
import pytest
from celery_workers import xor_dataset
from django.core.exceptions import ValidationError

from diagnosis.training.models import TrainedModel
from diagnosis.training.services import training, training_memory

MB = 1024 * 1024


def _limit_below_the_estimate(dataset, learner: str) -> float:
    """A limit in MB at half the estimate of training ``learner`` on ``dataset``."""
    estimate = training_memory.estimate_mb(
        learner=learner, n_cases=dataset.cases.count(), n_tests=dataset.tests.count()
    )
    assert estimate > 0
    return round(estimate / 2, 6)


@pytest.mark.django_db
def test_a_training_estimated_over_the_limit_is_refused_and_nothing_saved(model_admin, settings):
    """Patients x tests x the learner's factor above TRAINING_MEMORY_LIMIT_MB: a 4xx-style
    ValidationError naming the sizes and the limit; no training row is created."""
    dataset = xor_dataset("Too big for the worker")
    settings.TRAINING_MEMORY_LIMIT_MB = _limit_below_the_estimate(dataset, "eg2")
    with pytest.raises(ValidationError) as refused:
        training.request_training(user=model_admin, dataset=dataset, learner="eg2", params={})
    message = " ".join(refused.value.messages)
    assert "600 patients x 8 tests" in message
    assert f"limit of {settings.TRAINING_MEMORY_LIMIT_MB:,g} MB" in message
    assert not TrainedModel.objects.filter(dataset=dataset).exists()


@pytest.mark.django_db
def test_a_worker_with_a_lower_limit_fails_the_training_before_fitting(model_admin, settings):
    """The worker checks its own limit on the cases there are now: failed, with the reason,
    before any model is fitted."""
    dataset = xor_dataset("Too big for this worker")
    queued = training.create_training(user=model_admin, dataset=dataset, learner="eg2", params={})
    settings.TRAINING_MEMORY_LIMIT_MB = _limit_below_the_estimate(dataset, "eg2")
    trained = training.run_training(trained_model_id=queued.pk)
    assert trained.status == TrainedModel.FAILED and trained.model_json == ""
    assert "would need about" in trained.error and "TRAINING_MEMORY_LIMIT_MB" in trained.error
    assert trained.fit_seconds is None


def test_an_allocation_past_the_address_space_limit_fails_and_the_limit_is_lifted_after():
    """Inside the limit a 1 GB array is refused with MemoryError at once; outside it is not."""
    before = resource.getrlimit(resource.RLIMIT_AS)
    with training_memory.address_space_limit(64) as limit:
        assert limit is not None
        with pytest.raises(MemoryError):
            np.empty(1024 * MB, dtype=np.uint8)
    assert resource.getrlimit(resource.RLIMIT_AS) == before
    assert np.empty(1024 * MB, dtype=np.uint8).nbytes == 1024 * MB  # reserved, never touched


def test_no_limit_when_it_is_turned_off():
    """TRAINING_MEMORY_LIMIT_MB = 0: no estimate refusal and no address-space limit."""
    training_memory.check_estimate(learner="eg2", n_cases=10**7, n_tests=10**3, limit_mb=0)
    with training_memory.address_space_limit(0) as limit:
        assert limit is None


def test_the_out_of_memory_reason_says_what_happened_and_what_to_do():
    """The reason stored on a fit that hit the limit names the limit and the way out."""
    reason = training_memory.out_of_memory_reason(
        2048, MemoryError("Unable to allocate 20.4 GiB for an array")
    )
    assert "2,048 MB" in reason and "Unable to allocate 20.4 GiB" in reason
    assert "fewer patients or tests" in reason
