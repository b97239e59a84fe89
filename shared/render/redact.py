"""Masking of patient identifiers: consumes text, produces it with names, medical record
numbers, dates of birth, phone numbers and email addresses replaced by `[REDACTED …]`.

Identifiers are recognised by their label ("Patient Jane Doe", "MRN 448812",
"DOB: 03/14/1962") or by a shape clinical numbers never have (an email; a phone number
written in three separated groups such as 555-867-5309). Doses, rates, percentages,
blood pressures and plain dates stay as they are.
"""

from __future__ import annotations

import re

_NAME = r"[A-Z][a-zA-Z'’\-]+(?:\s+[A-Z]\.)?(?:\s+[A-Z][a-zA-Z'’\-]+)?"
_DATE = (r"\d{1,2}[/.\-]\d{1,2}[/.\-]\d{2,4}|\d{4}-\d{2}-\d{2}"
         r"|[A-Z][a-z]+\.?\s+\d{1,2},?\s+\d{4}|\d{1,2}\s+[A-Z][a-z]+\.?\s+\d{4}")
_RULES: tuple[tuple[re.Pattern, str], ...] = (
    (re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+"), "[REDACTED EMAIL]"),
    (re.compile(rf"\b((?:date\s+of\s+birth|DOB|D\.O\.B\.?|born(?:\s+on)?)\s*[:#\-]?\s*)(?:{_DATE})",
                re.I), r"\1[REDACTED DOB]"),
    (re.compile(r"\b((?:MRN|medical\s+record\s+(?:number|no\.?|#)|record\s+no\.?)\s*[:#]?\s*)"
                r"[A-Z0-9][A-Z0-9\-]{3,}", re.I), r"\1[REDACTED MRN]"),
    (re.compile(r"\b((?:SSN|social\s+security\s+(?:number|no\.?))\s*[:#]?\s*)\d{3}-?\d{2}-?\d{4}",
                re.I), r"\1[REDACTED SSN]"),
    (re.compile(r"\b((?:phone|tel|telephone|mobile|cell)\.?\s*[:#]?\s*)\+?\d[\d\s().\-]{6,}\d",
                re.I), r"\1[REDACTED PHONE]"),
    (re.compile(r"(?<![\w/.])(?:\+\d{1,3}[\s.\-]?)?(?:\(\d{3}\)\s?|\d{3}[\s.\-])\d{3}[\s.\-]\d{4}"
                r"(?![\w/])"), "[REDACTED PHONE]"),
    (re.compile(rf"\b((?:[Pp]atient|PATIENT|Pt\.?|Mr\.|Mrs\.|Ms\.|Mr|Mrs|Ms|Miss)"
                rf"(?:\s+name)?\s*[:,]?\s+){_NAME}"), r"\1[REDACTED NAME]"),
    (re.compile(rf"\b((?:[Pp]atient\s+)?[Nn]ame\s*:\s*){_NAME}"), r"\1[REDACTED NAME]"),
)


def mask_identifiers(text: str) -> str:
    """`text` with every patient identifier replaced by a `[REDACTED …]` mask."""
    for pattern, mask in _RULES:
        text = pattern.sub(mask, text)
    return text
