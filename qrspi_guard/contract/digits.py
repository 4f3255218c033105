"""How many digits a number read from untrusted text may have, and the one way such
digits become an int (a name's round, a finding's number, a JSON integer).

It imports nothing, so that a reader on the hook's hot path
(:mod:`qrspi_guard.parse.jsondoc`) can use it without loading the rest of the contract.
"""

from __future__ import annotations

#: At most this many significant digits are read as a number (Python refuses int() of
#: more than 4,300, and a value must never make a rule's cost grow with it).
MAX_DIGITS = 1000


def bounded_number(digits: str) -> int | None:
    """Decimal *digits* as an int when they have at most :data:`MAX_DIGITS` significant
    digits; None otherwise (never the int-digits ValueError)."""
    significant = digits.lstrip("0")
    if len(significant) > MAX_DIGITS or not digits.isascii() or not digits.isdigit():
        return None
    return int(significant or "0")
