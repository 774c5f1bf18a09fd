"""Money as people read it, one way everywhere: ``$1,234.50``, ``−$12.00``, ``–`` for none.

Every table, chart label, sentence and message that shows dollars calls :func:`format_money`
(templates through the ``money`` filter, ``diagnosis/templatetags/money.py``), so a table and
the advice never disagree on how an amount looks.  Plotly's own labels use the d3 format
``$,.2f``, which gives the same text.  CSV and JSON exports keep raw numbers.
"""

from __future__ import annotations

import math
from decimal import Decimal

__all__ = ["MINUS", "NO_AMOUNT", "format_money"]

#: Before the dollar of a negative amount (a risk can be a gain): the minus sign, not a hyphen,
#: as Plotly writes it on a chart's axis.
MINUS = "\u2212"
#: What an amount that is not there (None, NaN, infinite) reads as: an en dash.
NO_AMOUNT = "\u2013"


def format_money(amount: float | int | Decimal | None) -> str:
    """``$1,234.50``; ``−$12.00`` below zero; ``$0.00`` for what rounds to no cents either
    way (never ``−$0.00``); :data:`NO_AMOUNT` for None, NaN or an infinite amount."""
    if amount is None:
        return NO_AMOUNT
    value = float(amount)
    if not math.isfinite(value):
        return NO_AMOUNT
    digits = f"{abs(value):,.2f}"
    return f"{MINUS}${digits}" if value < 0 and digits != "0.00" else f"${digits}"
