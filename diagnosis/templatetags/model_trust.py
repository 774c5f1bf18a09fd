"""``{% model_warnings model %}``: the warning banner of a model a clinician should not trust.

The same partial on the model's card, its page and every case that uses it;
the reasons come from ``selectors.models.model_warnings`` (no logic here).
"""

from __future__ import annotations

from django import template

from ..selectors.models import model_warnings as warnings_for

register = template.Library()


@register.inclusion_tag("diagnosis/_model_warnings.html", takes_context=True)
def model_warnings(
    context, trained_model, compact: bool = False, on_model_page: bool = False
) -> dict:
    """The banner for ``trained_model`` (``compact``: one short line, for a card)."""
    request = context.get("request")
    if trained_model is None or request is None:
        return {"warnings": []}
    return {
        "warnings": warnings_for(user=request.user, trained_model=trained_model),
        "compact": compact,
        "on_model_page": on_model_page,
        "model": trained_model,
    }
