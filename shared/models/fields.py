"""Field types the contracts share, so that whatever a producer accepts can be stored.

`Text` is a str that UTF-8 can carry: Python strings may hold lone surrogates (from a
JSON escape like `"\\ud800"`, or an argument that was not UTF-8), which pass pydantic's
str but fail every JSON dump, so a query holding one would be accepted and then break
its worker. Numbers that are not finite (JSON `Infinity`, `NaN`, `1e400`) are refused by
`allow_inf_nan=False` in each model's config: JSON has no spelling for them, so they
would be stored as null.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

NOT_UTF8 = ("holds a lone surrogate {char} (character {at}), which UTF-8 cannot carry; send "
            "UTF-8 text, escaping a character beyond U+FFFF as a whole pair like \\ud83d\\ude00")


def utf8_text(value: Any) -> Any:
    """`value` unchanged; a `string_unicode` error naming the first lone surrogate in a
    str (pydantic's own check for it runs only on constrained strings)."""
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise PydanticCustomError("string_unicode", NOT_UTF8, {
                "char": repr(value[e.start]), "at": e.start + 1}) from None
    return value


Text = Annotated[str, BeforeValidator(utf8_text)]
"""A str that encodes as UTF-8 (so it survives JSON, Redis and the queues)."""
