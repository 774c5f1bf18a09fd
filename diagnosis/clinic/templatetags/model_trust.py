"""``{% model_warnings model %}``: the warning banner of a model a clinician should not trust.

The same partial on the model's card, its page and every case that uses it;
the reasons come from ``selectors.models.model_warnings`` (no logic here).
"""

from __future__ import annotations

from django import template

from diagnosis.training.selectors.models import model_page_open
from diagnosis.training.selectors.models import model_warnings as warnings_for

register = template.Library()


@register.inclusion_tag("clinic/_model_warnings.html", takes_context=True)
def model_warnings(
    context, trained_model, compact: bool = False, on_model_page: bool = False
) -> dict:
    """The banner for ``trained_model`` (``compact``: one short line, for a card)."""
    request = context.get("request")
    if trained_model is None or request is None:
        return {"warnings": []}
    warnings = warnings_for(user=request.user, trained_model=trained_model)
    return {
        "warnings": warnings,
        # a retired model's page answers a clinician 404: no link to it then
        "page_open": bool(warnings) and model_page_open(user=request.user, trained=trained_model),
        "compact": compact,
        "on_model_page": on_model_page,
        "model": trained_model,
    }


@register.simple_tag(takes_context=True)
def model_page_is_open(context, trained_model) -> bool:
    """``{% model_page_is_open trained as open %}``: whether this user may open the model's page
    (a retired model's, opened from a case, answers a clinician 404)."""
    request = context.get("request")
    return request is not None and model_page_open(user=request.user, trained=trained_model)
