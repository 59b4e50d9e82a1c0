"""Amounts, dates and terms as judgments write them (人民币二万一千二百八十四元, 3，000元, 二〇一八年七月十六日,
有期徒刑四年六个月), read into comparable values so the same quantity matches however it is spelled."""

from __future__ import annotations

import re
from dataclasses import dataclass

_DIGITS = {
    "零": 0,
    "〇": 0,
    "○": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_SMALL_UNITS = {"十": 10, "百": 100, "千": 1000}
_BIG_UNITS = {"万": 10_000, "亿": 100_000_000}
_FULLWIDTH = str.maketrans("０１２３４５６７８９．，", "0123456789.,")

CN_NUM = "零〇○一二两三四五六七八九十百千万亿"
_NUM = rf"(?:[0-9０-９][0-9０-９,，.．]*|[{CN_NUM}点]+)"

AMOUNT = re.compile(rf"(?:人民币)?({_NUM})(万|亿)?余?元(?:([{CN_NUM}0-9])角)?(?:([{CN_NUM}0-9])分)?")
DATE = re.compile(
    rf"([0-9０-９]{{4}}|[{CN_NUM}]{{4}})年([0-9０-９]{{1,2}}|[{CN_NUM}]{{1,3}})月(?:([0-9０-９]{{1,2}}|[{CN_NUM}]{{1,3}})日)?"
)
# A custodial or suspended term: 有期徒刑四年六个月, 拘役五个月, 缓刑一年.
TERM = re.compile(rf"(有期徒刑|拘役|管制|缓刑)(?:([{CN_NUM}0-9]+)年)?(?:([{CN_NUM}0-9]+)个月)?")


def cn_int(text: str) -> int | None:
    """Integer value of a Chinese numeral (二千零五, 十二, 一〇二) or None when it is not one."""
    if not text or any(c not in _DIGITS and c not in _SMALL_UNITS and c not in _BIG_UNITS for c in text):
        return None
    if not any(c in _SMALL_UNITS or c in _BIG_UNITS for c in text):
        # digit-by-digit spelling, as in years: 二〇一八
        return int("".join(str(_DIGITS[c]) for c in text))
    total, section, digit = 0, 0, None
    for c in text:
        if c in _DIGITS:
            digit = _DIGITS[c]
        elif c in _SMALL_UNITS:
            section += (1 if digit is None else digit) * _SMALL_UNITS[c]
            digit = None
        else:
            section += digit or 0
            total += (section or 1) * _BIG_UNITS[c]
            section, digit = 0, None
    return total + section + (digit or 0)


def number(text: str) -> float | None:
    """Value of an arabic (with thousands separators) or Chinese numeral; None if neither."""
    t = text.translate(_FULLWIDTH)
    if t[:1].isdigit():
        t = t.replace(",", "")
        try:
            return float(t.rstrip("."))
        except ValueError:
            return None
    whole, _, frac = t.partition("点")
    value = cn_int(whole)
    if value is None:
        return None
    if frac:
        digits = [_DIGITS.get(c) for c in frac]
        if None in digits:
            return None
        return float(f"{value}.{''.join(map(str, digits))}")
    return float(value)


@dataclass(frozen=True)
class Quantity:
    kind: str  # "amount" (yuan), "date" (ISO), "term" (months, with the penalty)
    value: str  # canonical form, the thing compared
    start: int  # character span in the text it came from
    end: int
    text: str


def amounts(text: str) -> list[Quantity]:
    """Every amount of money in `text`; 四百九十九万元三千五百元 (4,993,500 yuan written as 万 then the rest)
    is one amount."""
    out: list[Quantity] = []
    for m in AMOUNT.finditer(text):
        value = number(m.group(1))
        if value is None:
            continue
        value *= {"万": 10_000, "亿": 100_000_000}.get(m.group(2) or "", 1)
        jiao, fen = (number(g) if g else 0 for g in m.groups()[2:])
        value += (jiao or 0) / 10 + (fen or 0) / 100
        last = out[-1] if out else None
        if (
            last
            and last.end == m.start()
            and not m.group(2)
            and float(last.value) % 10_000 == 0 < value < 10_000
        ):
            value += float(last.value)
            out[-1] = Quantity("amount", f"{value:.2f}", last.start, m.end(), text[last.start : m.end()])
            continue
        out.append(Quantity("amount", f"{value:.2f}", m.start(), m.end(), m.group()))
    return out


def dates(text: str) -> list[Quantity]:
    out = []
    for m in DATE.finditer(text):
        y, mo, d = (number(g) if g else None for g in m.groups())
        if y is None or mo is None or not 1 <= mo <= 12 or (d is not None and not 1 <= d <= 31):
            continue
        value = f"{int(y):04d}-{int(mo):02d}" + (f"-{int(d):02d}" if d is not None else "")
        out.append(Quantity("date", value, m.start(), m.end(), m.group()))
    return out


def terms(text: str) -> list[Quantity]:
    out = []
    for m in TERM.finditer(text):
        years, months = (number(g) if g else 0 for g in m.groups()[1:])
        if years is None or months is None or not (years or months):
            continue
        out.append(
            Quantity("term", f"{m.group(1)}:{int(years * 12 + months)}", m.start(), m.end(), m.group())
        )
    return out
