"""Period fit: consumes a Document and the period constraints of a GET or SEARCH (the
period the source names, a `temporal_scope`, the publication lag), produces why the
document does not fit them (or None), the `Window` backends filter on, and the ranks
that order documents by how close their period is. Rules 3 and 4 of
`shared.search.matching`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta


from .dates import DateRange, format_scope
from .document import Document
from .periods import named_periods


@dataclass(frozen=True)
class Window:
    """A period constraint as backends filter on it: a document whose period overlaps
    [first, last], or with no period and published in [first, last + lag_days]."""

    first: date
    last: date
    lag_days: int

    @property
    def published_until(self) -> date:
        return self.last + timedelta(days=self.lag_days)

    def fits(self, doc: Document) -> bool:
        """What the backends' filters select (the same test, in Python)."""
        period = doc.period_range()
        if period is not None:
            return period[0] <= self.last and period[1] >= self.first
        published = published_on(doc)
        return published is not None and self.first <= published <= self.published_until


def published_on(doc: Document) -> date | None:
    """The day `doc` was published, if known."""
    try:
        return date.fromisoformat(doc.date) if doc.date else None
    except ValueError:
        return None


def window_for(period: DateRange | None, lag_days: int) -> Window | None:
    return Window(period[0], period[1], lag_days) if period else None


def period_fits(doc: Document, named: DateRange | None, scope: DateRange | None,
                lag_days: int) -> str | None:
    """Why `doc` does not fit the period `named` in the source and the window `scope`
    (rules 3 and 4), or None when it fits."""
    period = doc.period_range()
    titled = named_periods(doc.title)
    published = published_on(doc)
    if named is not None:
        label = format_scope(named)
        if titled and named not in titled:
            return f"title names {_labels(titled)}, the source names {label}"
        if not titled and period is not None and period != named:
            return f"about {doc.period}, the source names {label}"
        if not titled and period is None and not window_for(named, lag_days).fits(doc):
            return (f"no period of its own, and published {doc.date or 'on no known date'}, "
                    f"outside {label} + {lag_days} days")
    if scope is not None:
        window = window_for(scope, lag_days)
        label = format_scope(scope)
        if period is not None and not window.fits(doc):
            return f"about {doc.period}, outside temporal_scope {label}"
        if period is not None and not (scope[0] <= period[0] and period[1] <= scope[1]):
            return (f"about {doc.period}, wider than temporal_scope {label}: its figures "
                    "are for the whole of that period")
        if period is None and not window.fits(doc):
            return (f"no period of its own, and published {doc.date or 'on no known date'}, "
                    f"outside temporal_scope {label} + {lag_days} days")
    if period is None and published is None and (named or scope):
        return "neither a period nor a publication date"
    return None


def _labels(periods: list[DateRange]) -> str:
    return " and ".join(format_scope(p) for p in periods)


def period_rank(doc: Document, target: DateRange | None) -> int:
    """0 = the target itself (or no target) … 5 = no period, published in the lag."""
    if target is None:
        return 0
    period = doc.period_range()
    if period is None:
        published = published_on(doc)
        return 4 if published is not None and target[0] <= published <= target[1] else 5
    if period == target:
        return 0
    if target[0] <= period[0] and period[1] <= target[1]:
        return 1
    if period[0] <= target[0] and target[1] <= period[1]:
        return 2
    return 3


def recency(doc: Document) -> int:
    period = doc.period_range()
    if period is not None:
        return -period[1].toordinal()
    published = published_on(doc)
    return -published.toordinal() if published else 0
