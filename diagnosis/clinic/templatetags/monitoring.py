"""``{% model_monitoring model as m %}`` and ``{% confirmed_diagnosis case as c %}``.

The monitoring panel (model page), its alarm (home card) and the confirm form (case screen)
are includes of their own, so the pages that show them need one ``{% include %}`` line each;
the figures come from ``selectors.monitoring`` (no logic here).
"""

from __future__ import annotations

from django import template

from ..selectors.monitoring import confirmed_diagnosis_of, models_monitoring
from ..selectors.monitoring import model_monitoring as monitoring_of

register = template.Library()


@register.simple_tag(takes_context=True)
def model_monitoring(context, trained_model):
    """The model's realized figures and drift test, or None (no request, not ready)."""
    request = context.get("request")
    if request is None or trained_model is None or not trained_model.is_ready:
        return None
    return monitoring_of(user=request.user, trained_model=trained_model)


@register.simple_tag(takes_context=True)
def card_monitoring(context, trained_model):
    """A home card's monitoring: every card's is read at the first card, in a fixed number of
    queries (``selectors.monitoring.models_monitoring`` over the page's ``trained_models``),
    and kept for the request."""
    request = context.get("request")
    if request is None or trained_model is None or not trained_model.is_ready:
        return None
    # kept on the request: each include renders with a render context of its own
    cache = getattr(request, _CARDS, None)
    if cache is None or trained_model.pk not in cache:
        shown = [m for m in context.get("trained_models") or [] if m.is_ready]
        if trained_model not in shown:
            shown.append(trained_model)
        cache = models_monitoring(user=request.user, trained_models=shown)
        setattr(request, _CARDS, cache)
    return cache.get(trained_model.pk)


_CARDS = "_diagnosis_monitoring_cards"


@register.simple_tag
def confirmed_diagnosis(case):
    """The case's confirmed diagnosis in force, or None."""
    return confirmed_diagnosis_of(case) if case is not None and case.pk else None


@register.filter
def percent(value, digits: int = 1) -> str:
    """A share as a percentage ("–" for None)."""
    if value is None:
        return "–"
    return f"{100.0 * float(value):.{int(digits)}f}%"


@register.filter
def p_value(value) -> str:
    """A p-value as read aloud: "< 0.0001" rather than 0.0000."""
    if value is None:
        return "–"
    return "< 0.0001" if float(value) < 0.0001 else f"{float(value):.4f}"
