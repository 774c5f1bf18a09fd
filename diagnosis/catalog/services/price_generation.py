"""Automatic test prices for datasets without them (paper 000 §4.1), all or nothing.

The generator itself is ``learners.price_generator`` (the one definition); this
service reads a dataset's tests and patients, asks it for prices, and saves
them marked as generated (``DiagnosticTest.price_generated``, with the recipe in
``Dataset.price_generation``) so every screen can say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from diagnosis.permissions import require_model_admin
from learners.price_generator import (
    PriceGeneratorParams,
    generate_prices,
    information_gains,
)

from ..models import Dataset, DiagnosticTest, TestGroup
from ..selectors.costs import cost_snapshot
from ..selectors.datasets import dataset_arrays

__all__ = [
    "DEFAULT_PRICE_PARAMS",
    "GROUP_PREFIX",
    "PriceGeneratorParams",
    "generate_dataset_prices",
    "price_generator_params",
]

#: The generator's own defaults (the admin form starts from them).
DEFAULT_PRICE_PARAMS = PriceGeneratorParams()

#: Groups the generator makes are named "generated G1", "generated G2", ...
GROUP_PREFIX = "generated "


def price_generator_params(values: Mapping[str, Any]) -> PriceGeneratorParams:
    """The generator's parameters, or a ``ValidationError`` saying which one is wrong."""
    try:
        return PriceGeneratorParams.from_dict(values)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"Price generator: {exc}.") from None


def generate_dataset_prices(
    *, user, datasets: Sequence[Dataset], params: PriceGeneratorParams | Mapping[str, Any]
) -> list[Dataset]:
    """Price every test of each dataset with the generator; nothing is saved if one fails.

    Derived tests keep no price of their own (they cost their missing inputs).
    The tests' old groups are replaced by the generator's; a group left with
    no test is removed.  Each dataset gets the same parameters and seed.
    """
    require_model_admin(user)
    if not isinstance(params, PriceGeneratorParams):
        params = price_generator_params(params)
    if not datasets:
        raise ValidationError("Choose at least one dataset to price.")
    with transaction.atomic():
        done = []
        for dataset in datasets:
            try:
                done.append(_price_one(user=user, dataset=dataset, params=params))
            except ValidationError as exc:
                raise ValidationError(
                    f"{dataset.name}: {' '.join(exc.messages)} No prices were changed."
                ) from None
        return done


def _price_one(*, user, dataset: Dataset, params: PriceGeneratorParams) -> Dataset:
    dataset = Dataset.objects.select_for_update().get(pk=dataset.pk)
    tests = list(dataset.tests.order_by("index").select_for_update())
    priced = [t for t in tests if not t.derived_from]
    if not priced:
        raise ValidationError("it has no test to price.")
    gains = None
    if params.mode == "gain":
        try:
            X, y, categorical = dataset_arrays(dataset)
        except ValueError:
            raise ValidationError(
                "gain-proportional prices need the dataset's patients, and it has none; "
                "choose uniform prices."
            ) from None
        if len(set(y.tolist())) < 2:
            raise ValidationError(
                "gain-proportional prices need patients of at least two classes; "
                "choose uniform prices."
            )
        all_gains = information_gains(X, y, categorical=categorical)
        gains = [float(all_gains[t.index]) for t in priced]
    try:
        result = generate_prices(len(priced), params=params, gains=gains)
    except ValueError as exc:
        raise ValidationError(f"{exc}.") from None

    groups: dict[str, TestGroup] = {}
    for name in sorted({g for g in result.groups if g is not None}):
        groups[name], _ = TestGroup.objects.get_or_create(dataset=dataset, name=GROUP_PREFIX + name)
    for i, test in enumerate(priced):
        test.price = result.prices[i]
        test.discounted_price = result.discounted[i]
        test.delayed = result.delayed[i]
        group_name = result.groups[i]
        test.group = groups[group_name] if group_name is not None else None
        test.price_generated = True
        test.save(
            update_fields=["price", "discounted_price", "delayed", "group", "price_generated"]
        )
    for group in dataset.groups.all():
        if not DiagnosticTest.objects.filter(group=group).exists():
            group.delete()
    dataset.price_generation = {
        **params.to_dict(),
        "tests": len(priced),
        "generated_at": timezone.now().isoformat(timespec="seconds"),
        "generated_by": user.get_username(),
    }
    dataset.save(update_fields=["price_generation"])
    cost_snapshot(dataset)  # the new catalog must price like any other, or nothing is kept
    return dataset
