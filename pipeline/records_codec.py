"""Data-only JSON for trees of dataclasses: the records (pipeline.records) and the work built of them.

    dumps(value) -> bytes                 value: a dataclass instance
    loads(payload, cls) -> cls            raises CodecError where the data does not fit `cls`

The reader names the type it expects, and decoding follows that type's field annotations
(`typing.get_type_hints`), never the data: it builds only those dataclasses, enums and dates from
JSON's plain values, so a payload can hold text and numbers but cannot name a type to build or a
function to call. Every field is written, so `loads(dumps(x), type(x)) == x`. The annotations are read
once per type, and one outside what a record holds (dataclasses, enums, str, int, float, bool, dates,
lists, fixed-length tuples, `X | None`) is refused at once, even where no value of it is yet at hand,
rather than written as something it would not read back as.

Numbers are coerced to their annotation on the way out (a numpy float32 score is written as the float
it equals); floats are written by `repr`, so they read back bit for bit, NaN and infinities included
(as JSON's common extension).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import numbers
import operator
import types
import typing
from collections.abc import Callable
from enum import Enum

Codec = Callable[[object], object]


class CodecError(ValueError):
    """Data that does not fit the type it is read as (or a value that does not fit its annotation)."""


def dumps(value) -> bytes:
    text = json.dumps(_encoder(type(value))(value), ensure_ascii=False, separators=(",", ":"))
    # a lone surrogate (a JSONL record may hold one) passes, as json.loads decodes bytes: surrogatepass
    return text.encode("utf-8", "surrogatepass")


def loads(payload: bytes, cls: type):
    decode = _decoder(cls)  # before the data is looked at: a type without a data form is the caller's bug
    try:
        data = json.loads(payload)
    except ValueError as e:  # UnicodeDecodeError included
        raise CodecError(f"not JSON: {e}") from None
    return decode(data)


def _fields(cls: type) -> dict[str, object]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls)}


def _optional(hint) -> object | None:
    """X of `X | None`; None for any other annotation."""
    if typing.get_origin(hint) not in (types.UnionType, typing.Union):
        return None
    args = typing.get_args(hint)
    if len(args) != 2 or type(None) not in args:
        raise TypeError(f"{hint}: of the unions only `X | None` has a data form")
    return next(a for a in args if a is not type(None))


def _fixed(hint) -> tuple:
    args = typing.get_args(hint)
    if not args or Ellipsis in args:
        raise TypeError(f"{hint}: only tuples of a fixed length have a data form")
    return args


def _is_enum(hint) -> bool:
    return isinstance(hint, type) and issubclass(hint, Enum)


# ---- writing ------------------------------------------------------------------------------------


@functools.cache
def _encoder(hint) -> Codec:
    origin = typing.get_origin(hint)
    if (inner := _optional(hint)) is not None:
        some = _encoder(inner)
        return lambda v: None if v is None else some(v)
    if origin is list:
        item = _encoder(typing.get_args(hint)[0])
        return lambda v: [item(x) for x in v]
    if origin is tuple:
        items = [_encoder(h) for h in _fixed(hint)]
        return lambda v: [f(x) for f, x in zip(items, v, strict=True)]
    if dataclasses.is_dataclass(hint):
        return _record_encoder(hint)
    if _is_enum(hint):
        return lambda v: _enum_in(hint, v).value
    if hint in _SCALARS_OUT:
        return _SCALARS_OUT[hint]
    raise TypeError(f"{hint!r}: no data form")


def _record_encoder(cls: type) -> Codec:
    fields = [(name, _encoder(h)) for name, h in _fields(cls).items()]

    def encode(v):
        if type(v) is not cls:  # a subclass's own fields would be lost
            raise CodecError(f"a {type(v).__name__} where a {cls.__name__} belongs")
        return {name: f(getattr(v, name)) for name, f in fields}

    return encode


def _date_out(v) -> str:
    if type(v) is not dt.date:  # a datetime is a date too, but would not read back as one
        raise CodecError(f"{v!r} is not a date")
    return v.isoformat()


def _bool_out(v) -> bool:
    if not isinstance(v, bool):
        raise CodecError(f"{v!r} is not a bool")
    return v


def _int_out(v) -> int:
    if isinstance(v, bool):
        raise CodecError(f"{v!r} is a bool, not an int")
    return operator.index(v)  # a numpy integer too, never a float


def _float_out(v) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):  # numpy's floats are Real too
        raise CodecError(f"{v!r} is not a number")
    return float(v)


def _str_out(v) -> str:
    if not isinstance(v, str):
        raise CodecError(f"{v!r} is not a str")
    return str(v)  # a StrEnum member in a str field: its text


_SCALARS_OUT: dict[type, Codec] = {
    dt.date: _date_out,
    bool: _bool_out,
    int: _int_out,
    float: _float_out,
    str: _str_out,
}


# ---- reading ------------------------------------------------------------------------------------


@functools.cache
def _decoder(hint) -> Codec:
    origin = typing.get_origin(hint)
    if (inner := _optional(hint)) is not None:
        some = _decoder(inner)
        return lambda d: None if d is None else some(d)
    if origin is list:
        item = _decoder(typing.get_args(hint)[0])
        return lambda d: [item(x) for x in _exact(d, list)]
    if origin is tuple:
        return _tuple_decoder(hint)
    if dataclasses.is_dataclass(hint):
        return _record_decoder(hint)
    if _is_enum(hint):
        return functools.partial(_enum_in, hint)
    if hint in _SCALARS_IN:
        return _SCALARS_IN[hint]
    raise TypeError(f"{hint!r}: no data form")


def _tuple_decoder(hint) -> Codec:
    items = [_decoder(h) for h in _fixed(hint)]

    def decode(d):
        if len(_exact(d, list)) != len(items):
            raise CodecError(f"{len(d)} items where {hint} has {len(items)}")
        return tuple(f(x) for f, x in zip(items, d, strict=True))

    return decode


def _record_decoder(cls: type) -> Codec:
    fields = {name: _decoder(h) for name, h in _fields(cls).items()}

    def decode(d):
        if _exact(d, dict).keys() != fields.keys():
            raise CodecError(f"{cls.__name__}: fields {sorted(d)}, not {sorted(fields)}")
        return cls(**{name: f(d[name]) for name, f in fields.items()})

    return decode


def _enum_in(cls: type[Enum], d):
    try:
        return cls(d)
    except ValueError:
        raise CodecError(f"{d!r} is not a {cls.__name__}") from None


def _date_in(d) -> dt.date:
    try:
        return dt.date.fromisoformat(_exact(d, str))
    except ValueError:
        raise CodecError(f"{d!r} is not a date") from None


def _float_in(d) -> float:
    return float(d) if type(d) is int else _exact(d, float)


def _exact(d, kind: type):
    # the exact type: JSON's true is an int to isinstance, and must not read back as 1
    if type(d) is not kind:
        raise CodecError(f"{type(d).__name__} where a {kind.__name__} belongs")
    return d


_SCALARS_IN: dict[type, Codec] = {
    dt.date: _date_in,
    float: _float_in,
    **{kind: functools.partial(_exact, kind=kind) for kind in (bool, int, str)},
}
