"""English dates as documents print them: "Sep. 4, 2001", "Decided Sept. 30, 2014", "11 February 2022",
"21/01/2020" (day first, as English courts write it), with the slips OCR makes ("Nov.-14, 1967")."""

from __future__ import annotations

import datetime as dt
import re

_I = re.IGNORECASE
MONTH = (
    r"Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sept?(?:ember)?"
    r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?"
)
# "Sep. 4, 2001", "March 7,1876", "Nov.-14, 1967", "Aug 20: 1996": OCR keeps the month's word
MDY = re.compile(rf"\b({MONTH})\.?[\s\-.]*(\d{{1,2}})(?:st|nd|rd|th)?[,.:]?\s*((?:1[789]|20)\d\d)\b", _I)
_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({MONTH})\.?,?\s+((?:1[789]|20)\d\d)\b", _I)
_NUMERIC = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
_MONTHS = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}


def _made(year: str, month: str | int, day: str) -> dt.date | None:
    try:
        m = month if isinstance(month, int) else _MONTHS[month[:3].lower()]
        return dt.date(int(year), m, int(day))
    except ValueError:
        return None


def mdy_date(m: re.Match) -> dt.date | None:
    """The date an `MDY` match names (None for "Feb. 30")."""
    return _made(m[3], m[1], m[2])


def dates(s: str) -> list[tuple[int, str, dt.date]]:
    """(where it starts, the date as printed, the date) for every date in `s` with the month in words, in
    text order."""
    found = [(m.start(), m[0], mdy_date(m)) for m in MDY.finditer(s)]
    found += [(m.start(), m[0], _made(m[3], m[2], m[1])) for m in _DMY.finditer(s)]
    return sorted((at, printed, d) for at, printed, d in found if d is not None)


def parse_date(s: str) -> dt.date | None:
    """The first date in `s`: one with its month in words, else a day-first numeric one."""
    if found := dates(s):
        return found[0][2]
    if m := _NUMERIC.search(s):
        return _made(m[3], int(m[2]), m[1])
    return None
