"""Search terms: which stems a text holds, read from a long text without stemming every
word of it, agrees with stemming every word."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.search.terms import IRREGULAR, SHORT_TEXT, all_words, holds_all, stem

WORDS = ["report", "reports", "reported", "company", "companies", "delivery", "deliveries",
         "spies", "spy", "tried", "try", "shipped", "ship", "rate", "rated", "grew", "grow",
         "paid", "payment", "effective", "quarterly", "quarter", "Capital", "EXPENDITURES",
         "毛", "利", "率", "营业收入", "Q3", "10-K", "3M", "AT&T", "e-mail", *IRREGULAR,
         "amortisation", "amortization", "capitalised", "labour", "favourable", "centre",
         "programmes", "exercised", "premises"]


@settings(max_examples=400, deadline=None)
@given(text=st.lists(st.sampled_from(WORDS), min_size=1, max_size=400),
       wanted=st.sets(st.sampled_from(WORDS), min_size=1, max_size=4),
       gap=st.sampled_from([" ", ", ", "\n", " ("]))
def test_a_text_holds_the_stems_that_stemming_all_of_its_words_gives(text, wanted, gap):
    body = gap.join(text)
    stems = {s for w in wanted for s in all_words(w)}
    assert holds_all(body, stems) == (stems <= all_words(body))


def test_a_long_filing_is_read_only_until_each_word_is_found():
    filing = "Purchases of property and equipment (9,576). " * 2_000 + "quarterly"
    assert len(filing) > SHORT_TEXT
    assert holds_all(filing, {stem("purchase"), stem("quarterly")})
    assert not holds_all(filing, {stem("purchase"), stem("zebra")})


def test_a_british_spelling_is_the_american_word():
    assert stem("amortisation") == stem("amortization")
    assert stem("capitalised") == stem("capitalized")
    assert stem("unfavourable") == stem("unfavorable")
    assert stem("centres") == stem("centers")
    filing = "Depreciation and amortisation 1,234. " * 2_000
    assert len(filing) > SHORT_TEXT
    assert holds_all(filing, {stem("amortization"), stem("depreciation")})

