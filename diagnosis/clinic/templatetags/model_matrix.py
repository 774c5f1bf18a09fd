"""``{% matrix_flag model %}`` and ``{% diagram_link model %}`` for a model's card.

``matrix_flag``: the "trained with a different matrix" note (``selectors.matrices``), linking
to the model page's retrain.  ``diagram_link``: "view its trees" for a forest or an ensemble,
"view how it decides" for the conditioned-loss model, "view the tree" otherwise
(``selectors.decision.diagram_kind``).  No logic here.
"""

from __future__ import annotations

from django import template
from django.urls import reverse
from django.utils.html import format_html

from diagnosis.permissions import is_model_admin
from diagnosis.training.selectors.matrices import matrix_status

from ..selectors.decision import diagram_kind

register = template.Library()


@register.simple_tag(takes_context=True)
def matrix_flag(context, trained_model) -> str:
    """A short note on a ready model whose dataset's matrix moved on without it; else nothing."""
    request = context.get("request")
    if trained_model is None or request is None or not trained_model.is_ready:
        return ""
    status = matrix_status(user=request.user, trained_model=trained_model)
    if not status.trained_with_different:
        return ""
    url = reverse("model-detail", args=[trained_model.pk]) + "#matrix-in-force"
    # Only someone who may retrain is offered to; a clinician is told who can.
    action = (
        format_html('<a href="{}">Retrain</a>', url)
        if is_model_admin(request.user)
        else format_html('<a href="{}">Details</a>; a model administrator can retrain it', url)
    )
    return format_html(
        '<div class="model-warning model-warning-compact matrix-flag" role="note">'
        "<strong>Trained with a different matrix</strong>: {}. {}</div>",
        "; ".join(status.reasons),
        action,
    )


@register.simple_tag
def diagram_link(trained_model) -> str:
    """The link to the model's diagram: its member trees, or its tree."""
    if trained_model is None or not trained_model.is_ready:
        return ""
    kind = diagram_kind(trained_model)
    if kind == "ensemble":
        url, text = reverse("model-ensemble", args=[trained_model.pk]), "view its trees"
    elif kind == "decision":
        url, text = reverse("model-decision", args=[trained_model.pk]), "view how it decides"
    else:
        url, text = reverse("model-tree", args=[trained_model.pk]), "view the tree"
    return format_html('<a class="small" href="{}">{}</a>', url, text)
