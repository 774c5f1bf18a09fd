"""``{{ amount|money }}``: dollars as everywhere else (``shared.money.format_money``)."""

from __future__ import annotations

from django import template

from ..shared.money import format_money

register = template.Library()


@register.filter
def money(amount) -> str:
    """``$1,234.50``, ``−$12.00``, ``–`` for no amount; text that is not a number: empty."""
    try:
        return format_money(amount)
    except (TypeError, ValueError):
        return ""
