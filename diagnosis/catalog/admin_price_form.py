"""The admin form of the automatic price generator (paper 000 §4.1).

Fractions are typed as percentages, as the paper states them; the parameters
are checked by ``learners.price_generator`` (through the service), so the form
and the library cannot disagree about what is valid.
"""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from .services.price_generation import (
    DEFAULT_PRICE_PARAMS,
    PriceGeneratorParams,
    price_generator_params,
)

_DEFAULTS = DEFAULT_PRICE_PARAMS


class PriceGenerationForm(forms.Form):
    """Cost range, groups, delayed share, group discount, uniform or gain prices, seed."""

    low = forms.FloatField(
        label="Lowest price",
        initial=_DEFAULTS.cost_range[0],
        min_value=0.01,
        help_text="Every price is drawn between the lowest and the highest (paper: 1 to 100).",
    )
    high = forms.FloatField(label="Highest price", initial=_DEFAULTS.cost_range[1], min_value=0.01)
    groups_percent = forms.FloatField(
        label="Groups (% of the tests)",
        initial=_DEFAULTS.group_fraction * 100,
        min_value=0,
        max_value=100,
        help_text=(
            "20 makes one group per five tests; each test joins one of them or none, all "
            "equally likely. A group of one test is dropped."
        ),
    )
    delayed_percent = forms.FloatField(
        label="Delayed tests (% of the tests)",
        initial=_DEFAULTS.delayed_fraction * 100,
        min_value=0,
        max_value=100,
        help_text="Tests whose result arrives later (lab tests), chosen at random.",
    )
    discount_percent = forms.FloatField(
        label="Group discount (% of the group's cheapest price)",
        initial=_DEFAULTS.group_discount * 100,
        min_value=0,
        max_value=99,
        help_text="Taken off a test's price when another test of its group is already done.",
    )
    mode = forms.ChoiceField(
        label="Prices",
        initial=_DEFAULTS.mode,
        choices=[
            ("gain", "Higher for informative tests (drawn around a mean that grows with the gain)"),
            ("uniform", "Uniform in the range"),
        ],
        widget=forms.RadioSelect,
    )
    seed = forms.IntegerField(
        label="Seed",
        initial=_DEFAULTS.seed,
        min_value=0,
        max_value=2**32 - 1,
        help_text="The same seed and settings give the same prices again.",
    )

    def clean(self):
        super().clean()
        data = self.cleaned_data
        if self.errors:
            return data
        try:
            data["params"] = self.params()
        except ValidationError as exc:
            self.add_error(None, exc)
        return data

    def params(self) -> PriceGeneratorParams:
        data = self.cleaned_data
        return price_generator_params(
            {
                "cost_range": (data["low"], data["high"]),
                "group_fraction": data["groups_percent"] / 100,
                "delayed_fraction": data["delayed_percent"] / 100,
                "group_discount": data["discount_percent"] / 100,
                "mode": data["mode"],
                "seed": data["seed"],
            }
        )
