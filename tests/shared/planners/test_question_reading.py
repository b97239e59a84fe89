"""Reading questions about filings: periods (`FY2018`, `FY22`, `fiscal 2018`, `Q2 of
FY2023`, two periods named apart), companies as they are written (`3M`, `AT&T`,
`eBay`, `Johnson & Johnson`), metrics a question defines or asks for (change,
percentage change, average, total, share, ratio, the unit asked) and questions whose
answer is not a figure. Most questions are TAT-QA's (its dev file: real annual reports,
questions written by people; CC BY 4.0), as the bench names their reports."""

from __future__ import annotations

from datetime import date

import pytest

from shared.planners.metric import Refusal, by_parts, by_shared_words, read_metric
from shared.planners.quarters import filing_quarter
from shared.planners.rows import item_words
from shared.tools.rows import label_words
from shared.planners.question import Question
from shared.search.terms import all_words


@pytest.mark.parametrize("question, period", [
    ("What is the FY2018 capital expenditure amount (in USD millions) for 3M?", "FY2018"),
    ("What was AT&T's revenue in FY22?", "FY2022"),
    ("What was the gross margin in fiscal 2018?", "FY2018"),
    ("What were Patriot Transportation Holding's operating revenues in Q2 of FY2023?",
     "Q2 FY2023"),
    ("What was the revenue in the fiscal 2019 third quarter?", "Q3 FY2019"),
    ("What is the gross margin for F19?", "FY2019"),
    ("How much was the derivative liabilities as at December 31, 2019?", "2019-12-31"),
    ("What was the operating revenues for Q4 2019 for Bell Wireless?", "2019-Q4"),
    ("What was revenue in the 2019 financial year?", "FY2019"),
    ("What was revenue for the year ended June 2019?", "2018-07-01..2019-06-30"),
    ("What was revenue in the December 2019 quarter?", "2019-Q4"),
    ("What was revenue for the half-year ended 31 December 2019?", "2019-H2"),
])
def test_a_period_as_filings_questions_write_it_is_the_column_asked_for(question, period):
    metric = read_metric(question)
    assert [t.when.text for t in metric.terms] == [period]
    # no word of the period is left in the item ("revenue quarter", "revenue financial year")
    assert not any(w in t.item.split() for t in metric.terms for w in ("quarter", "financial"))


def test_fy2018_is_a_period_not_a_code_the_document_must_hold():
    q = Question.read("What is the FY2018 capital expenditure amount for 3M?")
    assert q.periods == ((date(2018, 1, 1), date(2018, 12, 31)),)
    assert q.identifiers == frozenset()
    assert q.names_in("3M 2018 Form 10-K", "capital expenditures", {"3m", "2018", "form"})


def test_two_fiscal_years_named_apart_are_two_periods_not_one_window():
    q = Question.read("What was Johnson & Johnson's inventory in FY2021 and FY2022?")
    assert q.periods == ((date(2021, 1, 1), date(2021, 12, 31)),
                         (date(2022, 1, 1), date(2022, 12, 31)))
    metric = read_metric("What is the average inventory of Johnson & Johnson for FY2021 and "
                         "FY2022?")
    assert [t.when.text for t in metric.terms] == ["FY2021", "FY2022"]
    assert metric.expression == "($T1 + $T2) / 2"


@pytest.mark.parametrize("question, title, other", [
    ("What was 3M's capital expenditure in FY2018?", "3M 2018 Form 10-K", "AMD 2018 Form 10-K"),
    ("What was AT&T's revenue in FY2022?", "AT&T 2022 Annual Report", "Verizon 2022 Annual Report"),
    ("What was eBay's net income in FY2021?", "eBay 2021 Form 10-K", "Etsy 2021 Form 10-K"),
    ("What was Johnson & Johnson's inventory in FY2022?", "Johnson & Johnson 2022 Form 10-K",
     "Pfizer 2022 Form 10-K"),
    # in capitals, a word its stem shortens ("acme" is stemmed "acm" in titles' words)
    ("What was ACME's revenue in 2023?", "ACME 10-K 2023", "Apex 10-K 2023"),
    ("What was the revenue of NICE in 2022?", "NICE Ltd 2022 Form 20-F", "Verint 2022 Form 10-K"),
])
def test_a_company_as_written_must_be_the_documents(question, title, other):
    q = Question.read(question)
    titled = set().union(*(all_words(t) for t in (title, other)))  # as the planner reads them
    assert q.names_in(title, "", titled)
    assert not q.names_in(other, "", titled)


@pytest.mark.parametrize("question, title, about", [
    # typed in lower case, the company is the word its titles begin with
    ("what was acme's revenue in 2023?", "ACME Corp. Annual Report 2023", True),
    ("what was 3m's capital expenditure in 2018?", "3M 2018 Form 10-K", True),
    ("what was the revenue of coca-cola in 2022?", "The Coca-Cola Company 10-K 2022", True),
    ("what was apex's revenue in 2023?", "ACME Corp. Annual Report 2023", False),
    # no company named: a title's first word is not enough
    ("what was the revenue in 2023?", "ACME Corp. Annual Report 2023", False),
    # a line item's word, or a document's kind, names no company
    ("what was apex revenue in 2023?", "Revenue Holdings 10-K", False),
    ("what was the annual revenue of apex?", "Annual Report ACME", False),
])
def test_a_company_typed_in_lower_case_is_the_titles_first_word(question, title, about):
    assert Question.read(question).names_in(title, "", set(all_words(title))) is about


def test_an_acronym_no_title_uses_is_no_company():
    q = Question.read("What was the EBITDA of Cududic in 2019?")
    assert q.names_in("Cududic annual report 2019", "", {"cududic", "annual", "report"})


@pytest.mark.parametrize("question, items, periods, expression", [
    # TAT-QA dev questions, each naming its report as the bench does
    ("What is the change in Other in 2019 from 2018, according to Cududic's annual report?",
     ["Other", "Other"], ["2018", "2019"], "$T2 - $T1"),
    ("What is the percentage change in Other in 2019 from 2018, according to Cududic's "
     "annual report?", ["Other", "Other"], ["2018", "2019"],
     "round(($T2 - $T1) / $T1 * 100, 2)"),
    ("What is the increase/ (decrease) in Revenues of Teekay LNG from, 2019 to 2018?",
     ["Revenues of Teekay LNG"] * 2, ["2018", "2019"], "$T2 - $T1"),
    ("What is the average accrued payroll and employee benefits for 2018 and 2019?",
     ["accrued payroll and employee benefits"] * 2, ["2018", "2019"], "($T1 + $T2) / 2"),
    ("What was the average risk-free interest rate over the 3 year period from 2017 to 2019?",
     ["risk-free interest rate"] * 3, ["2017", "2018", "2019"], "($T1 + $T2 + $T3) / 3"),
    ("What is the total net operating loss carry-forwards in 2018 and 2019?",
     ["net operating loss carry-forwards"] * 2, ["2018", "2019"], "$T1 + $T2"),
    ("What is the value of Kyocera resale products as a percentage of AVX's total sales in "
     "2018?", ["Kyocera resale products", "AVX's total sales"], ["2018", "2018"],
     "round($T1 / $T2 * 100, 2)"),
    ("What is the ratio of inventory reserves to accrued compensation in 2018?",
     ["inventory reserves", "accrued compensation"], ["2018", "2018"], "round($T1 / $T2, 2)"),
    ("How much did the expected long term rate of return on plan assets decrease by from "
     "2017 to 2019?", ["expected long term rate of return on plan assets"] * 2,
     ["2017", "2019"], "$T1 - $T2"),
    ("What is the difference in total costs incurred between 2018 and 2019?",
     ["total costs incurred"] * 2, ["2018", "2019"], "abs($T2 - $T1)"),
    ("What was the amount of Finished Goods in 2019?", ["Finished Goods"], ["2019"], None),
    ("What is the difference between the net cash provided by operating activities from 2018 "
     "to 2019?", ["net cash provided by operating activities"] * 2, ["2018", "2019"],
     "$T2 - $T1"),
    ("What is the change between direct energy consumption (MWh) in 2018 and 2019 year end?",
     ["direct energy consumption (MWh)"] * 2, ["2018", "2019"], "$T2 - $T1"),
    ("What is the total value of computer equipment and software at the end of 2018 and 2019 "
     "altogether?", ["computer equipment and software at the end"] * 2, ["2018", "2019"],
     "$T1 + $T2"),
    # added up by a last "combined": a label's own "Total" stays the row's
    ("What was the total other assets in 2019 and 2018 combined?",
     ["total other assets"] * 2, ["2018", "2019"], "$T1 + $T2"),
    ("What was the cost of goods sold in 2019 and 2018 combined?",
     ["cost of goods sold"] * 2, ["2018", "2019"], "$T1 + $T2"),
    # "altogether" and "in total" add up what a "total" before the item names
    ("What is the total gross profit altogether for years ended December 31, 2018 and 2019?",
     ["gross profit"] * 2, ["2018-12-31", "2019"], "$T1 + $T2"),
    ("From fiscal year 2025 - 2026, what is the total number of leases expiring in total?",
     ["leases expiring"] * 2, ["FY2025", "FY2026"], "$T1 + $T2"),
    # two days of one year, the year written once; a quarter named by the day it ended
    ("What is the percentage change in the working capital adjustment at June 30 and "
     "December 31, 2019?", ["working capital adjustment"] * 2, ["2019-06-30", "2019-12-31"],
     "round(($T2 - $T1) / $T1 * 100, 2)"),
    ("What was the change in net income between quarters ended January 26 and April 27, "
     "2019?", ["net income"] * 2, ["2019-01-26", "2019-04-27"], "$T2 - $T1"),
    # a quarter of two years, the quarter written once
    ("What is the sum of the operating revenues for Bell Media in Q4 2019 and 2018?",
     ["operating revenues for Bell Media"] * 2, ["2018-Q4", "2019-Q4"], "$T1 + $T2"),
    ("What is the change in revenue from Q4 2018 to Q1 2019?", ["revenue"] * 2,
     ["2018-Q4", "2019-Q1"], "$T2 - $T1"),
    # quarters named with no year: the newest year's, which EXTRACT reads as "Q3"
    ("What was the net sales in the third quarter?", ["net sales"], ["Q3"], None),
    ("What was the change in the net sales between the third and fourth quarter?",
     ["net sales"] * 2, ["Q3", "Q4"], "$T2 - $T1"),
    # "the period" before the years is no word of the item; "end of period" is
    ("What is the increase/ (decrease) in Audit-Related Fees from the period 2018 to 2019?",
     ["Audit-Related Fees"] * 2, ["2018", "2019"], "$T2 - $T1"),
    ("What is the contributed equity at end of period for 2018?",
     ["contributed equity at end of period"], ["2018"], None),
    # quarters whose year the question names once, apart or beside one of them
    ("In 2019, what is the change in high price between the third quarter and fourth "
     "quarter?", ["high price"] * 2, ["2019-Q3", "2019-Q4"], "$T2 - $T1"),
    ("What is the change in revenues between the second and first quarter in the fiscal "
     "year 2019?", ["revenues"] * 2, ["Q1 FY2019", "Q2 FY2019"], "$T2 - $T1"),
    # "annual" in an average over years is the averaging's word, not the item's
    ("What is the average annual amount of current accounts receivable in 2018 and 2019?",
     ["current accounts receivable"] * 2, ["2018", "2019"], "($T1 + $T2) / 2"),
    ("What is the average quarterly low price in 2018?", ["low price"] * 4,
     ["2018-Q1", "2018-Q2", "2018-Q3", "2018-Q4"], "($T1 + $T2 + $T3 + $T4) / 4"),
    # a range's two ends: the high less the low, whichever the question names first
    ("In the first quarter of 2018, what is the difference between the low and high price?",
     ["high price", "low price"], ["2018-Q1"] * 2, "$T1 - $T2"),
    ("What is the difference in the high and low prices of the common stock in the fourth "
     "quarter of 2019?", ["high prices of the common stock", "low prices of the common stock"],
     ["2019-Q4"] * 2, "$T1 - $T2"),
    # the share's own words before its first item, and "(in percentage)" as the unit
    ("What is the proportion of products as a percentage of the total cost of revenue in "
     "2019?", ["products", "total cost of revenue"], ["2019", "2019"],
     "round($T1 / $T2 * 100, 2)"),
    ("What is the ratio (in percentage) of total notes payable to total capital lease "
     "obligations in 2019?", ["total notes payable", "total capital lease obligations"],
     ["2019", "2019"], "round($T1 / $T2 * 100, 2)"),
    ("What is the percentage constitution of Depreciation and Amortisation in EBITDA in F19?",
     ["Depreciation and Amortisation", "EBITDA"], ["FY2019", "FY2019"],
     "round($T1 / $T2 * 100, 2)"),
])
def test_a_tatqa_question_reads_as_its_line_items_and_arithmetic(question, items, periods,
                                                                 expression):
    metric = read_metric(question)
    assert [t.item for t in metric.terms] == items
    assert [t.when.text for t in metric.terms] == periods
    assert metric.expression == expression


def test_a_metric_the_question_defines_becomes_its_parts_and_the_arithmetic():
    metric = read_metric("What is the fixed asset turnover ratio for FY2019? Fixed asset "
                         "turnover ratio is defined as: FY2019 revenue / (average PP&E "
                         "between FY2018 and FY2019). Round your answer to two decimal places.")
    assert [(t.item, t.when.text) for t in metric.terms] == [
        ("revenue", "FY2019"), ("PP&E", "FY2018"), ("PP&E", "FY2019")]
    assert metric.expression == "round($T1 / ( (($T2 + $T3) / 2) ), 2)"


@pytest.mark.parametrize("definition, items, expression", [
    ("Free cash flow is defined as operating cash flow minus capital expenditure.",
     ["operating cash flow", "capital expenditure"], "$T1 - $T2"),
    ("It is defined as operating cash flow less capital expenditure.",
     ["operating cash flow", "capital expenditure"], "$T1 - $T2"),
    ("It is calculated as net income divided by total assets.",
     ["net income", "total assets"], "round($T1 / $T2, 2)"),
    ("It is defined as net income plus depreciation times 2.",
     ["net income", "depreciation"], "round($T1 + $T2 * 2, 2)"),
    # "less than" is no operator: one operand, which no row will be named
    ("It is defined as revenue less than cash.", ["revenue less than cash"], "$T1"),
    # a difference is exact in its cells' places ("$73,365 million", not "73,365.00"),
    # unless the question asks for places
    ("It is defined as operating cash flow minus capital expenditure, rounded to one decimal "
     "place.", ["operating cash flow", "capital expenditure"], "round($T1 - $T2, 1)"),
])
def test_a_defined_formula_may_write_its_operators_as_words(definition, items, expression):
    metric = read_metric(f"What was ACME's metric in FY2020? {definition}")
    assert [t.item for t in metric.terms] == items
    assert metric.expression == expression


def test_an_average_of_a_defined_metric_over_years_is_the_formula_in_each_year_averaged():
    metric = read_metric("What is Apple's 3 year average gross margin from FY2022 to FY2024? "
                         "Gross margin is defined as: gross margin / total net sales, as a "
                         "percentage.")
    assert [(t.item, t.when.text) for t in metric.terms] == [
        ("gross margin", "FY2022"), ("total net sales", "FY2022"),
        ("gross margin", "FY2023"), ("total net sales", "FY2023"),
        ("gross margin", "FY2024"), ("total net sales", "FY2024")]
    assert metric.percent and metric.expression == \
        "round(((($T1 / $T2) + ($T3 / $T4) + ($T5 / $T6)) / 3) * 100, 2)"
    # "3 year average of capex as a % of revenue" (no formula given): the share each year
    share = read_metric("What is the FY2022 - FY2024 3 year average of capex as a % of "
                        "revenue?")
    assert [(t.item, t.when.text) for t in share.terms] == [
        ("capex", "FY2022"), ("revenue", "FY2022"), ("capex", "FY2023"),
        ("revenue", "FY2023"), ("capex", "FY2024"), ("revenue", "FY2024")]
    assert share.kind == "defined" and share.expression == \
        "round(((($T1 / $T2) + ($T3 / $T4) + ($T5 / $T6)) / 3) * 100, 2)"
    # a defined metric over several periods that is no average is not told
    refused = read_metric("What was Apple's gross margin in FY2023 and FY2024? Gross margin is "
                          "defined as: gross margin / total net sales.")
    assert isinstance(refused, Refusal)


def test_an_operand_without_a_period_of_its_own_takes_the_questions():
    metric = read_metric("What is Patriot Transportation Holding's FY2019 current ratio? "
                         "Current ratio is defined as: total current assets / total current "
                         "liabilities.")
    assert [(t.item, t.when.text) for t in metric.terms] == [
        ("total current assets", "FY2019"), ("total current liabilities", "FY2019")]


def test_a_formula_asked_as_a_percentage_keeps_its_last_operand_whole():
    metric = read_metric("What was NVIDIA's gross margin for the quarter ended April 30, 2023? "
                         "Gross margin is defined as: gross profit / revenue, as a percentage.")
    assert [t.item for t in metric.terms] == ["gross profit", "revenue"]
    assert metric.percent and metric.expression == "round(($T1 / $T2) * 100, 2)"
    assert metric.name == "NVIDIA's gross margin"  # not "… gross margin ? Gross margin"
    ratio = read_metric("What is Apple's quick ratio as of December 31, 2022? Quick ratio is "
                        "defined as: (cash and cash equivalents + accounts receivable) / total "
                        "current liabilities, as a percentage.")
    assert ratio.percent and ratio.terms[-1].item == "total current liabilities"


def test_a_percentage_in_an_items_name_is_not_the_unit_asked():
    # "margin percentage" holds "in percentage" inside a word: the item keeps its name
    metric = read_metric("What is Apple's gross margin percentage for the quarter ended "
                         "December 31, 2022?")
    assert metric.terms[0].item == "Apple's gross margin percentage"


def test_what_a_company_paid_for_something_is_its_payments():
    # Apple writes "Payments for dividends and dividend equivalents", Microsoft "Common
    # stock cash dividends paid": both are payments of dividends
    for question, item in [
            ("How much did Apple pay in dividends and dividend equivalents in the quarter ended "
             "December 31, 2022?", "payments of dividends and dividend equivalents"),
            ("How much did Microsoft pay in common stock cash dividends in the three months "
             "ended September 30, 2023?", "payments of common stock cash dividends"),
            # "Cash paid for income taxes" (Palantir's supplemental disclosures)
            ("How much cash did Palantir pay for income taxes in 2022?",
             "cash payments of income taxes")]:
        metric = read_metric(question)
        assert metric.kind == "value" and metric.terms[0].item == item
        assert metric.terms[0].when is not None


def test_what_a_company_spent_on_or_earned_in_an_item_the_library_knows_is_that_item():
    # Apple's and Rocket Lab's "Research and development" expense; Apple's "Payments for
    # acquisition of property, plant and equipment", the library's capital expenditure
    for question, item in [
            ("How much did Apple spend on research and development in fiscal 2018?",
             "research and development"),
            ("How much did Rocket Lab spend on research and development in FY2021?",
             "research and development"),
            ("How much did Apple spend on capital expenditure (in USD millions) in FY2021?",
             "capital expenditure"),
            # what a company earned or generated in an item is that item
            ("How much did Apple earn in net income for the fiscal year ended September 25, "
             "2021?", "net income"),
            ("How much did Ondas generate in revenue in 2021?", "revenue"),
            # the library knows no "marketing": what was paid for it, as before
            ("How much did Apple spend on marketing in 2020?", "payments of marketing")]:
        metric = read_metric(question)
        assert metric.kind == "value" and metric.terms[0].item == item, question
        assert metric.terms[0].when is not None


def test_the_cash_an_activity_gave_or_took_is_the_cash_generated_by_or_used_in_it():
    # Apple's 10-K for fiscal 2020: "Cash generated by operating activities" 69,391 and
    # "Repurchases of common stock" (66,897) for fiscal 2019
    for question, item, period in [
            ("How much cash did Apple generate from operating activities for the fiscal year "
             "ended September 28, 2019?", "cash generated by operating activities",
             (date(2018, 10, 1), date(2019, 9, 28))),
            ("How much cash did Apple use to repurchase its common stock in FY2019?",
             "cash used to repurchase its common stock", (date(2019, 1, 1), date(2019, 12, 31))),
            ("How much cash did Palantir use in investing activities in 2021?",
             "cash used in investing activities", (date(2021, 1, 1), date(2021, 12, 31)))]:
        metric = read_metric(question)
        assert metric.kind == "value" and metric.terms[0].item == item
        assert metric.terms[0].when.span == period


def test_how_much_of_something_a_company_had_or_earned_is_that_item():
    # Apple's 10-K for fiscal 2021: "Commercial paper" 6,000, "Cash and cash equivalents"
    # 34,940 on the balance sheet
    for question, item in [
            ("How much commercial paper did Apple have outstanding as of September 25, 2021?",
             "commercial paper"),
            ("How much cash and cash equivalents did Apple hold as of September 25, 2021?",
             "cash and cash equivalents"),
            ("How much revenue did Ondas generate in 2021?", "revenue"),
            ("How much net income did Apple earn in fiscal 2021?", "net income"),
            ("How much total sales did the company report in 2019?", "total sales"),
            ("How much interest expense did the company incur in 2019?", "interest expense")]:
        (term,) = read_metric(question).terms
        assert term.item == item and term.when is not None
    # the cash an activity generated stays the cash generated by it
    (term,) = read_metric("How much cash did Apple generate from operating activities in "
                          "fiscal 2021?").terms
    assert term.item == "cash generated by operating activities"


def test_where_the_answer_is_to_come_from_is_no_item_and_keeps_the_period_it_names():
    for question in ["What was Apple's net income as reported in its Form 10-K for fiscal 2019?",
                     "What was Apple's net income in fiscal 2019 as reported in its Form 10-K?",
                     "What was Apple's net income in fiscal 2019, according to its Form 10-K?"]:
        (term,) = read_metric(question).terms
        assert term.item == "Apple's net income" and term.when.text == "FY2019"
    # the period named before the source is the one asked, not the report's
    (term,) = read_metric("What was revenue in 2018, according to the 2019 annual report of "
                          "Zukoraz?").terms
    assert (term.item, term.when.text) == ("revenue", "2018")
    # "reported in current liabilities" says which line, not where to look: the date stays
    (term,) = read_metric("What was the deferred revenue reported in current liabilities on "
                          "Apple's balance sheet as of September 28, 2019?").terms
    assert term.when.text == "2019-09-28" and "current liabilities" in term.item


def test_the_unit_asked_is_the_answers_scale():
    metric = read_metric("What is the FY2018 capital expenditure amount (in USD millions) for "
                         "3M? Give a response to the question by relying on the details shown "
                         "in the cash flow statement.")
    assert metric.scale == 6 and metric.terms[0].item == "capital expenditure amount for 3M"


@pytest.mark.parametrize("question", [
    "What is the 2019 average free cash flow?",  # an average of 2019 and 2018 balances
    "What is the percentage change in BCE operating revenues in 2019?",
    "What is the net percentage difference in net sales between 2017 and 2019?",
    "What was the change in revenue in the previous year?",
    # a size to some of TAT-QA's answers, a signed change to others
    "What is the difference between the net cash used for financing activities in 2018 and "
    "2019?",
])
def test_arithmetic_a_question_leaves_open_is_not_read(question):
    # refused, or one term whose periods the table planner reads from one table
    metric = read_metric(question)
    assert isinstance(metric, Refusal) or len(metric.terms) == 1 and metric.expression is None
    if isinstance(metric, Refusal):
        return
    assert metric.open or metric.kind == "value"
    assert metric.open or metric.terms[0].when is None or "average" in metric.terms[0].item


@pytest.mark.parametrize("question", [
    "Which regions does eBay operate in?",
    "What are the contract types?",
    "How is TCE rate Per day derived?",
    "Why did operating income decrease in fiscal 2019?",
    "What does in-game net revenues include?",
    "What is Trade receivables?",
    "In which year was the amount of Investments higher?",
    "Where does the company reports the intangible impairment charges?",
    "Is the company's revenue growing?",
    "What was the last fiscal year of expiration for domestic-state tax credit carryforwards?",
    "What year did revenue peak?",
    "What are Patriot Transportation Holding's services?",
    "What are the main risks Apple describes in its Form 10-Q?",
    "What is the total revenue comprised of?",
    "What are the services in the segment?",
    "What are the reasons for the year over year increase?",
    "What are the main products the company sells?",
    "What are the products offered?",
    "What is the nature and purpose of the facility?",
    "What were the products and services offered in 2018?",
    "What was the basis of preparation in 2019?",
    "Give the reasons for the increase in revenue in 2019.",
    "Show me the products sold in 2019.",
])
def test_a_question_whose_answer_is_words_is_recognised(question):
    assert Question.read(question).not_figure is not None


@pytest.mark.parametrize("question", [
    "What was the net sales in Americas in 2018?",
    "What was the amount of Service-Based RSUs in 2017?",
    "What was the expected term in 2019 in years?",
    "What is the year-over-year change in revenue from 2018 to 2019?",
    "What was the year end balance of cash in 2019?",
    "What is the percentage change in the valuation allowance from 2018 to 2019?",
    "How much is the 2019 free cash flow?",
    # a named metric at a date (Apple's 10-Q), not "what is a current ratio"
    "What is Apple's current ratio as of December 31, 2022? Current ratio is defined as: "
    "total current assets / total current liabilities.",
    # a segment's line item (Apple's 10-K), not "what are its services"
    "What was Apple's Services gross margin in 2024?",
    "What were Apple's Products net sales in FY2024?",
    # an average or change of a line item named like a list ("Services", "Products …")
    "What was the average Services for 2018 and 2019?",
    "What was the change in services between 2018 and 2019?",
    "What is the average Products and licensing costs for 2018 and 2019?",
    # a line item named like a list, at a date or in a year
    "What was the professional services as of February 1, 2019?",
    "What were the services in fiscal 2019?",
    "What was the products at 30 June 2019?",
    # a list word that is a line item's first word
    "What was the equity method investments as of December 28, 2018?",
    # a label copied with its list word, asked with "was" in a year
    "What was the products and licensing costs in 2018?",
    "What was the other items(1) in 2019?",
    # a share asked as what a whole is made up of
    "What proportion of level 2 inputs is made up of money market funds?",
])
def test_a_question_asking_for_a_figure_is_not_taken_for_one_asking_for_words(question):
    assert Question.read(question).not_figure is None


@pytest.mark.parametrize("question, item", [
    ("Give the capitalized research and development expenditures for 2019.",
     "capitalized research and development expenditures"),
    ("Tell me the income tax provision in 2019.", "income tax provision"),
    ("Please give me the income tax provision for 2019", "income tax provision"),
    ("Show the United States revenue for 2019", "United States revenue"),
])
def test_a_request_in_the_imperative_reads_as_the_question(question, item):
    m = read_metric(question)
    assert [(t.item, t.when.text) for t in m.terms] == [(item, "2019")]
    assert Question.read(question).not_figure is None


def test_a_share_asked_as_what_a_whole_is_made_up_of_reads_part_over_whole():
    m = read_metric("What percentage of the total amortized cost is made up of foreign "
                    "government obligations in 2018, according to Pimuder's annual report?")
    assert [(t.item, t.when.text) for t in m.terms] == [
        ("foreign government obligations", "2018"), ("total amortized cost", "2018")]
    assert (m.expression, m.percent) == ("round($T1 / $T2 * 100, 2)", True)


def test_a_difference_in_a_measure_between_two_things_reads_the_measure_of_each():
    m = read_metric("What was the difference in the net sales in 2019 between APAC and EMEA, "
                    "according to Siralab's annual report?")
    assert [(t.item, t.when.text) for t in m.terms] == [("APAC net sales", "2019"),
                                                         ("EMEA net sales", "2019")]
    assert (m.kind, m.expression) == ("difference", "$T1 - $T2")


def test_a_difference_between_things_joined_by_several_ands_is_refused():
    m = read_metric("What was the difference in the fair value amount between purchased "
                    "technology and trademarks and tradenames, according to Rerutas's annual "
                    "report?")
    assert isinstance(m, Refusal) and "more than one 'and'" in m.why


def test_a_change_in_a_percentage_keeps_the_percentage_as_its_item():
    m = read_metric("What was the change in percentage of sales represented by gross profit "
                    "between 2018 and 2019, according to Mutoris's annual report?")
    assert {t.item for t in m.terms} == {"percentage of sales represented by gross profit"}
    assert not m.percent
    asked = read_metric("What was the change in gross profit between 2018 and 2019 (in "
                        "percentage), according to Mutoris's annual report?")
    assert {t.item for t in asked.terms} == {"gross profit"}  # "(in percentage)": the unit


def test_the_sum_of_two_line_items_reads_each_in_the_period_named():
    m = read_metric("What was the sum of Accrued expenses and Other long-term liabilities in "
                    "2019, according to Cipipem's annual report?")
    assert [(t.item, t.when.text) for t in m.terms] == [("Accrued expenses", "2019"),
                                                         ("Other long-term liabilities", "2019")]
    assert (m.kind, m.expression) == ("sum", "$T1 + $T2")
    several = read_metric("What is the sum of research and development and sales and "
                          "marketing in 2019?")
    assert isinstance(several, Refusal) and "more than one 'and'" in several.why


@pytest.mark.parametrize("question", [
    "What was the change in revenue due to, according to Foo's annual report?",
    "What is the increase in revenue attributable to?",
    "What was the percentage change in revenue driven by?",
    "What contributed to the change in revenue in 2019?",
    "How did revenue change in 2019?",
    "What does the change in revenue reflect?",
])
def test_what_a_change_is_due_to_or_how_it_went_is_not_a_figure(question):
    assert Question.read(question).not_figure is not None


@pytest.mark.parametrize("question", [
    "What is the amount due to related parties in 2019?",
    "What was the revenue attributable to owners of the parent in 2019?",
    "What was the cash used for investing activities in 2019?",
])
def test_due_to_or_used_for_inside_a_line_item_is_still_a_figure(question):
    assert Question.read(question).not_figure is None


def test_a_question_ending_on_a_preposition_asks_for_words():
    # TAT-QA dev: "… recognized as" is answered "part of the net actuarial (gain) loss …"
    assert Question.read("What is the change in the projected benefit obligation of the "
                         "benefit plans recognized as, according to Gubinug's annual "
                         "report?").not_figure is not None


@pytest.mark.parametrize("question, scale", [
    ("What is the average contributed equity for 2018 and 2019 in terms of $M?", 6),
    ("What was revenue in 2019 (in $bn)?", 9),
    ("What was revenue in 2019 in thousands?", 3),
])
def test_the_scale_a_question_asks_its_answer_in(question, scale):
    assert read_metric(question).scale == scale


@pytest.mark.parametrize("question, items", [
    # TAT-QA dev: a total less its part, whichever the question names first
    ("What is the difference in the gross carrying amount between the current and the total?",
     ["total gross carrying amount", "current gross carrying amount"]),
    ("What was the difference between total net receivables and current net receivables?",
     ["total net receivables", "current net receivables"]),
    # neither a total: the order asked
    ("What was the difference between accrued expenses and other long-term liabilities in "
     "2019?", ["accrued expenses", "other long-term liabilities"]),
])
def test_a_difference_between_a_total_and_its_part_is_the_total_less_the_part(question, items):
    metric = read_metric(question)
    assert [t.item for t in metric.terms] == items
    assert metric.expression == "$T1 - $T2"


@pytest.mark.parametrize("question, expression", [
    ("How much higher were total net sales in 2019 than in 2018?", "$T2 - $T1"),
    ("How much more was revenue in 2019 than 2018?", "$T2 - $T1"),
    ("How much lower was revenue in 2018 than in 2019?", "$T2 - $T1"),
    ("How much higher was revenue in 2018 than in 2019?", "$T1 - $T2"),
    ("How much less was revenue in 2019 than in 2018?", "$T1 - $T2")])
def test_how_much_higher_in_one_period_than_another_is_the_one_less_the_other(question,
                                                                             expression):
    metric = read_metric(question)
    assert [t.when.text for t in metric.terms] == ["2018", "2019"]  # oldest first
    assert metric.expression == expression


@pytest.mark.parametrize("question, item", [
    ("What was the year-over-year revenue growth in 2022?", "revenue"),
    ("What was the YoY total net sales growth in 2022?", "total net sales"),
    ("What was the year-over-year change in revenue in 2022?", "revenue"),
])
def test_a_year_over_year_growth_said_around_its_item_is_its_percentage_change(question,
                                                                              item):
    # "Palantir's year-over-year revenue growth in 2022" was not found: no row says it
    metric = read_metric(question)
    assert metric.kind == "percent_change" and metric.terms[0].item == item


def test_yoy_is_a_change_over_the_year_before_not_a_company():
    q = Question.read("What was the YoY change in Tocomos's total net sales between 2018 and "
                      "2019?")
    assert "yoy" not in q.names and "tocomo" in " ".join(q.names)
    metric = read_metric("What was the YoY change in total net sales between 2018 and 2019?")
    assert metric.kind == "percent_change"  # as "year-over-year change" is
    assert [(t.item, t.when.text) for t in metric.terms] == [
        ("total net sales", "2018"), ("total net sales", "2019")]


@pytest.mark.parametrize("question, kind", [
    ("What share of total net sales came from Ceramic Components in 2019?", "ratio"),
    ("What proportion of total net sales did Ceramic Components account for in 2019?",
     "ratio"),
    ("What percentage of total net sales did Ceramic Components represent in 2019?", "share"),
    ("In 2019, what percentage of total net sales was from Ceramic Components?", "share")])
def test_a_share_asked_with_a_verb_is_the_part_over_the_whole(question, kind):
    metric = read_metric(question)
    assert [(t.item, t.when.text) for t in metric.terms] == [
        ("Ceramic Components", "2019"), ("total net sales", "2019")]
    assert metric.kind == kind


@pytest.mark.parametrize("question", [
    "What was the total net sales in 2019 vs 2018?",
    "What was the total revenue in 2019 compared to 2018?",
    "What was the average revenue in 2019 versus 2018?"])
def test_two_periods_set_against_each_other_are_never_added(question):
    # "total" here is the row's ("Total net sales"), as TAT-QA's "total … in 2019 and
    # 2018" is a sum
    assert isinstance(read_metric(question), Refusal)
    assert read_metric("What is the total cost of revenue in both 2019 and 2018?"
                       ).expression == "$T1 + $T2"


def test_how_many_of_something_a_company_has_is_their_number():
    metric = read_metric("How many employees did Patriot Transportation Holding have in "
                         "fiscal 2019?")
    assert [(t.item, t.when.text) for t in metric.terms] == [("employees", "FY2019")]
    assert metric.expression is None


@pytest.mark.parametrize("question, item", [
    ("How many shares were granted in 2019?", "shares granted"),
    ("How many options were outstanding in 2019?", "options outstanding"),
    ("How many stores were opened in 2019?", "stores opened"),
    ("What was the number of employees in 2019?", "employees")])
def test_how_many_were_done_is_a_count_of_the_line_item_the_verb_names(question, item):
    metric = read_metric(question)
    assert [(t.item, t.when.text, t.counted) for t in metric.terms] == [(item, "2019", True)]
    assert not read_metric("What was the revenue in 2019?").terms[0].counted


def test_a_quarterly_filing_is_about_the_fiscal_quarter_its_text_names_most():
    quarter = (date(2022, 9, 25), date(2022, 12, 31))
    apple = "Apple Inc. | Q1 2023 Form 10-Q | 3 " * 5 + "the fourth quarter of fiscal 2022"
    assert filing_quarter(apple, quarter) == (1, 2023)
    # a year's report names its quarters as parts; a quarter said twice says too little
    assert filing_quarter(apple, (date(2022, 1, 1), date(2022, 12, 31))) is None
    assert filing_quarter("Apple Inc. | Q1 2023 Form 10-Q " * 2, quarter) is None
    # a fiscal quarter that cannot end on the filing's last day is another's
    assert filing_quarter("the first quarter of fiscal year 2022. " * 5, quarter) is None


def test_a_company_written_as_a_mark_names_the_document_and_the_other_names_its_text():
    q = Question.read("What was NVIDIA's Data Center revenue for the quarter ended October 29, "
                      "2023?")
    title = "NVIDIA Corporation Form 10-Q for the quarter ended October 29, 2023"
    titled = all_words(title) | all_words("Apple Inc. Form 10-Q")
    assert q.names_in(title, "Revenue by market: Data Center, Gaming.", titled)
    assert not q.names_in(title, "Revenue by market: Gaming.", titled)
    assert not q.names_in("Apple Inc. Form 10-Q", "Data Center", titled)


def test_an_average_rate_of_change_over_years_is_refused_not_a_change_in_an_average():
    for question in ("What is the average annual growth rate of revenue from 2017 to 2019?",
                     "What was the average percentage change in revenue from 2017 to 2019?"):
        refused = read_metric(question)
        assert isinstance(refused, Refusal) and "compounded" in refused.why, question
    price = read_metric("What is the percentage change in average selling price from 2018 "
                        "to 2019?")
    assert price.kind == "percent_change" and price.terms[0].item == "average selling price"


def test_an_average_change_over_years_averages_a_row_of_changes_not_the_change_of_a_balance():
    # TAT-QA dev: a cash flow summary states "Net change in cash balance" for each year
    metric = read_metric("What was the average net change in cash balance in 2018 and 2019?")
    assert metric.kind == "average" and metric.expression == "($T1 + $T2) / 2"
    assert [(t.item, t.when.text) for t in metric.terms] == [
        ("net change in cash balance", "2018"), ("net change in cash balance", "2019")]
    change = read_metric("What was the change in average price between 2018 and 2019?")
    assert change.kind == "change" and change.terms[0].item == "average price"


@pytest.mark.parametrize("question, items, expression", [
    ("What is the total percentage of revenue from Apple and Huawei in 2017?",
     ["percentage of revenue from Apple", "percentage of revenue from Huawei"], "$T1 + $T2"),
    ("What is the average percentage of revenue from Apple and Huawei in 2017?",
     ["percentage of revenue from Apple", "percentage of revenue from Huawei"],
     "($T1 + $T2) / 2"),
    ("What is the proportion, in percentage, of deferred revenue and accrued warranty over "
     "gross deferred tax assets in 2019?",
     ["deferred revenue", "accrued warranty", "gross deferred tax assets"],
     "round(($T1 + $T2) / $T3 * 100, 2)"),
])
def test_two_things_a_question_adds_are_read_as_two_rows_when_no_row_states_both(
        question, items, expression):
    parts = by_parts(read_metric(question))
    assert [t.item for t in parts.terms] == items and parts.expression == expression


@pytest.mark.parametrize("question", [
    "What was the revenue and cost of revenue in 2019?",  # both asked for, not added
    "What is the total of A and B and C in 2019?",  # which are line items, unsaid
])
def test_a_question_that_adds_nothing_or_names_one_thing_is_not_split(question):
    metric = read_metric(question)
    assert isinstance(metric, Refusal) or by_parts(metric) is None


@pytest.mark.parametrize("question, first", [
    ("What is the difference between the domestic and international discount rates as at "
     "September 30, 2019?", "domestic discount rates"),
    ("What is the difference between the Americas and EMEA revenues in 2019?",
     "Americas revenues"),
])
def test_the_first_of_two_things_compared_may_share_the_seconds_last_words(question, first):
    metric = read_metric(question)
    assert metric.terms[0].item != first  # read so only when it alone names no row
    assert by_shared_words(metric).terms[0].item == first


def test_two_things_compared_each_of_several_words_share_nothing():
    assert by_shared_words(read_metric("What is the difference between cost of sales and "
                                       "operating expenses in 2019?")) is None


def test_arising_from_joins_a_line_items_words_as_from_does():
    # TAT-QA dev: "the net sales arising from total electronic components" is the row
    # "Total Electronic Components" of a table of net sales
    assert item_words("net sales arising from total electronic components") == item_words(
        "net sales from total electronic components")
    assert label_words("Goodwill arising on acquisition").words == label_words(
        "Goodwill on acquisition").words


@pytest.mark.parametrize("question, item", [
    ("What was the revenue reported for 2019?", "revenue"),
    ("What is the revenue figure for 2019?", "revenue"),
    ("What was revenue in calendar 2019?", "revenue"),
    ("What was the revenue as reported in 2019?", "revenue as reported"),  # a column's name
    ("What was the deferred revenue recognized in 2019?", "deferred revenue recognized"),
])
def test_words_after_the_item_that_name_no_line_item_are_not_part_of_it(question, item):
    assert [t.item for t in read_metric(question).terms] == [item]


@pytest.mark.parametrize("question, item", [
    # the cell sweep's row of a TAT-QA dev table: "U.S." ended the question there
    ("What was the free cash flow (non-U.S. GAAP measure) in 2019?",
     "free cash flow (non-U.S. GAAP measure)"),
    ("What was the revenue of Acme Co. in 2019? Thanks.", "revenue of Acme Co."),
])
def test_an_abbreviations_stop_ends_no_sentence(question, item):
    assert [t.item for t in read_metric(question).terms] == [item]


def test_when_a_debt_falls_due_is_its_name_and_due_in_a_year_is_the_period_asked():
    notes = read_metric("What were the 4.875% Senior Notes due December 2022 as of December "
                        "31, 2019?")
    assert [(t.item, t.when.text) for t in notes.terms] == [
        ("4.875% Senior Notes due December 2022", "2019-12-31")]
    assert Question.read("What were the notes maturing in 2025 in 2019?").periods == (
        (date(2019, 1, 1), date(2019, 12, 31)),)
    due = read_metric("What was the less estimated amounts not currently due in 2018?")
    assert [(t.item, t.when.text) for t in due.terms] == [
        ("less estimated amounts not currently due", "2018")]


def test_a_colon_in_the_questions_own_words_opens_no_lead_in():
    # the cell sweep's: "Less:" opens a row's name, and the question is all of it
    share = read_metric("What was the deferred tax assets, net as a percentage of less: "
                        "valuation allowance in 2019?")
    assert share.kind == "share" and len(share.terms) == 2
    assert [t.item for t in read_metric("Kindly answer: what was the revenue in 2019?").terms] \
        == ["revenue"]


def test_the_total_change_in_two_years_adds_each_years_change_and_between_them_is_one():
    total = read_metric("What was the total net change in cash balance in 2018 and 2019?")
    assert total.kind == "sum" and [t.item for t in total.terms] == [
        "net change in cash balance"] * 2
    between = read_metric("What was the total net change in cash balance between 2018 and 2019?")
    assert between.kind == "change"


def test_a_date_in_figures_is_read_when_its_order_shows_and_refused_when_it_does_not():
    balance = read_metric("What was the accumulated depreciation as of 12/31/2018?")
    assert [(t.item, t.when.text) for t in balance.terms] == [
        ("accumulated depreciation", "2018-12-31")]
    assert read_metric("What was revenue for the year ended 30/06/19?").terms[0].when.text \
        == "2019-06-30"
    unclear = read_metric("What was the accumulated depreciation as of 03/04/2018?")
    assert isinstance(unclear, Refusal) and "March 4 or 3 April" in unclear.why
