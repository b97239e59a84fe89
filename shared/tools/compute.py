"""COMPUTE: consumes an expression over `$VAR`s and the variables' values, produces an
exact Decimal (arithmetic) or a bool (comparison, and/or/not).

The expression is parsed with `ast.parse(mode="eval")` and walked against a whitelist;
nothing ever reaches eval/exec. Allowed: numbers (read as Decimal from their source text,
never via float), `$NAME`/`${NAME}`, `+ - * / // % **` (|exponent| <= 100), unary `- +`,
comparisons (`< <= > >= == !=`, chained), `and or not`, parentheses, and calls to
`abs`, `min`, `max`, `mean`, `sum` and `round(x[, places])` (rounds half away from zero);
`min`, `max`, `mean` and `sum` take a list variable (an EXTRACT of a row in every period,
`period: "all"`) as its figures, which no other operation takes (`mean(abs($X))`: the
figures' amounts); `change($X)` and `percent_change($X)` take a list of two figures (a
row in the two periods of its table, earliest first): the later less the earlier, and
that over the earlier times 100; a list of another length is UNCLEAR_ARITHMETIC (which
two periods the plan must say), and the parentheses rule below holds as for `$B - $A`
and `($B - $A) / $A`. Arithmetic runs
at 28 significant digits; `//` and `%` truncate toward zero, as Decimal does.

A variable whose value is typed (its `quantity`: money in USD in thousands, a percent)
enters with its unit, and the result gets one (shared/tools/units.py): scales are
brought to one before adding or comparing (millions and thousands), a ratio of two
amounts of money is a number in units, currencies are never mixed (CURRENCY_MISMATCH),
money and a percent never added (UNIT_MISMATCH). Numbers the expression writes, and
variables without a quantity, are plain: they take the unit of what they meet, and an
expression over plain values only computes exactly as written. An amount times or over
a power of a thousand the expression writes (`$DIFF * 1000`, `$CAPEX / 1000`) is the
amount restated in another scale, as a plan converts millions to thousands: the value
is the product, the quantity's scale moves so that the amount in units stays.

Result value (run_compute): a bool stays a bool; a Decimal becomes a string without
exponent, keeping the decimal places exact arithmetic gives (`91.7 - 92` -> "-0.3",
`1.50 + 1` -> "2.50"), while inexact quotients carry 28 digits (`round(...)` for fewer);
with typed inputs it is the amount in the result's scale, and `quantity` says which
(money, USD, scale 3: "$9,576 thousand").

Arithmetic whose meaning the figures leave open is refused (UNCLEAR_ARITHMETIC) rather
than answered one way: adding or subtracting a figure a table writes in accountants'
parentheses, or taking a mean or sum over it (an expense "(21,387)", an allowance "(135)": a change or an average of it
may be of the amounts or of the signed figures), or dividing or multiplying it by a
positive figure (shares forfeited "(12,632)" as a percentage of the shares outstanding);
EXTRACT writes a negative with a minus
where its row states figures of both signs, "542.0" beside "(762.3)", so that one is
signed; a relative change `(a - b) / b` of two such figures is the same either way and is
computed), and a difference of percentages over a percentage (a percentage change of
percentages may mean points or a relative change).

ToolError codes: BAD_EXPRESSION, MISSING_INPUT, NOT_A_NUMBER, DIVISION_BY_ZERO,
OUT_OF_RANGE (beyond 1e99, an exponent past 100, or no real result like `(-8) ** 0.5`),
CURRENCY_MISMATCH, UNIT_MISMATCH, UNCLEAR_ARITHMETIC.
"""

from __future__ import annotations

import ast
import operator
import warnings
from collections import deque
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal, DecimalException, localcontext

import regex

from shared.errors import ToolError
from shared.models import ComputeStep
from shared.models.plan import VAR_RE
from shared.models.quantity import SCALE_WORDS, Quantity
from shared.tools.base import Finding, ToolOutput
from shared.tools.numbers import as_number, format_decimal
from shared.tools.units import Unit, common, product, quantity_of, quotient, settle, unit_of

MAX_LENGTH = 1000
MAX_EXPONENT = 100
MAX_DEPTH = 100
_CONTEXT = Context(prec=28, Emax=99, Emin=-99)
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv,
           ast.Mod: operator.mod, ast.Pow: operator.pow}
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
            ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne}
_ARITY = {"abs": (1, 1), "min": (1, 50), "max": (1, 50), "round": (1, 2), "mean": (1, 50),
          "sum": (1, 50), "change": (1, 1), "percent_change": (1, 1)}
_OVER_SERIES = ("min", "max", "mean", "sum")
"""Functions that take a series (a row read in every period) as its figures."""
_OF_TWO = ("change", "percent_change")
"""Functions of a series of two figures: the later less the earlier, and that over the
earlier in percent."""
_ALLOWED = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Call,
            ast.Name, ast.Constant, ast.Load, ast.USub, ast.UAdd, ast.Not, ast.And,
            ast.Or, *_BINARY, *_COMPARE)
_FILENAME = "<chordal-expression>"
# "1and 2" parses with a SyntaxWarning on stderr; the whitelist judges it, not the log
warnings.filterwarnings("ignore", category=SyntaxWarning, module=_FILENAME)
_BRACKETED = regex.compile(r"^\s*[$€£¥₹]?\s*\(")
"""An accountants' negative: "(135)", "$(17,334)"."""
_GRAMMAR = ("use numbers, $NAME variables, + - * / // % **, < <= > >= == !=, "
            "and/or/not, parentheses and abs/min/max/round/mean/sum/change/percent_change")


@dataclass(frozen=True)
class Expression:
    """A parsed, whitelisted expression; `names` maps placeholders to variable names."""

    source: str
    python: str
    tree: ast.Expression
    names: dict[str, str]

    def text(self, node: ast.AST) -> str:
        """The source of `node` as the plan wrote it (`$Y`, not the placeholder)."""
        seg = ast.get_source_segment(self.python, node) or ast.unparse(node)
        return regex.sub(r"\b_v+\d+\b", lambda m: "$" + self.names.get(m[0], m[0]), seg)


def _bad(what: str) -> ToolError:
    # the expression itself is not quoted: the step names it, and a plan's 422 sends no input back
    return ToolError("BAD_EXPRESSION", f"expression: {what}; {_GRAMMAR}")


def parse_expression(expression: str) -> Expression:
    """Parse and whitelist-check `expression` without evaluating it (raises ToolError)."""
    source = expression.strip()
    if len(source) > MAX_LENGTH:
        raise _bad(f"is longer than {MAX_LENGTH} characters; split it into steps")
    prefix = "_v"
    while prefix in source:  # placeholders must not collide with anything written
        prefix += "v"
    names: dict[str, str] = {}

    def placeholder(m: regex.Match) -> str:
        names[f"{prefix}{len(names)}"] = m[1]
        return f"{prefix}{len(names) - 1}"

    python = VAR_RE.sub(placeholder, source)
    try:
        tree = ast.parse(python, filename=_FILENAME, mode="eval")
    except SyntaxError as e:
        raise _bad(f"does not parse ({e.msg})") from None
    except (ValueError, RecursionError, MemoryError):
        raise _bad("is nested too deeply to parse") from None
    parsed = Expression(source, python, tree, names)
    callees = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    pending = deque([(tree, 0)])  # breadth first: an outer construct is reported before its parts
    while pending:
        node, depth = pending.popleft()
        if depth > MAX_DEPTH:
            raise _bad(f"nests deeper than {MAX_DEPTH} levels; split it into steps")
        _check(parsed, node, callees)
        pending += [(child, depth + 1) for child in ast.iter_child_nodes(node)]
    return parsed


def _check(parsed: Expression, node: ast.AST, callees: set[int]) -> None:
    if not isinstance(node, _ALLOWED):
        kind = {ast.Attribute: "attribute access", ast.Lambda: "lambda",
                ast.IfExp: "if/else"}.get(type(node), type(node).__name__)
        what = f"{kind} {parsed.text(node)!r}" if isinstance(node, ast.expr) else f"operator {kind}"
        raise _bad(f"{what} is not allowed")
    if isinstance(node, ast.Constant) and type(node.value) not in (int, float):
        raise _bad(f"the literal {parsed.text(node)} is not a number")
    if isinstance(node, ast.Name) and node.id not in parsed.names:
        if node.id not in _ARITY:
            raise _bad(f"the bare name {node.id!r} is not allowed "
                                      f"(write ${node.id} to refer to a variable)")
        if id(node) not in callees:
            raise _bad(f"{node.id} must be called, like {node.id}($X)")
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in _ARITY:
            raise _bad(f"calling {parsed.text(node.func)} is not allowed")
        low, high = _ARITY[name]
        if node.keywords or not low <= len(node.args) <= high:
            raise _bad(f"{name}() takes {low} to {high} plain arguments")


def evaluate(expression: str, variables: dict[str, object],
             quantities: dict[str, Quantity | None] | None = None) -> Decimal | bool:
    """The value of `expression` with `$NAME` read from `variables` (keys `NAME` or
    `$NAME`); a variable with a quantity in `quantities` is read with its unit and scale
    (shared/tools/units.py)."""
    return evaluate_typed(expression, variables, quantities)[0]


def evaluate_typed(expression: str, variables: dict[str, object],
                   quantities: dict[str, Quantity | None] | None = None
                   ) -> tuple[Decimal | bool, Unit | None]:
    """`evaluate`, with the unit of the result (None: plain, or true/false)."""
    parsed = parse_expression(expression)
    with localcontext(_CONTEXT):
        try:
            result, unit = _Evaluator(parsed, variables, quantities or {}).value_of(
                parsed.tree.body)
        except DecimalException:  # overflow, or no real result: reported below
            result, unit = Decimal("NaN"), None
    if isinstance(result, bool) or result.is_finite():
        return result, unit
    raise ToolError("OUT_OF_RANGE", f"expression {parsed.source!r} has no result within "
                    "±1e99 at 28 digits (too large, or no real root like (-8) ** 0.5)")


class _Evaluator:
    def __init__(self, parsed: Expression, variables: dict[str, object],
                 quantities: dict[str, Quantity | None]):
        self.parsed, self.variables, self.quantities = parsed, variables, quantities
        self.relative: set[int] = set()
        """The subtractions of a relative change of two negatives ((a - b) / b)."""

    def value_of(self, node: ast.expr) -> tuple[Decimal | bool, Unit | None]:
        if isinstance(node, ast.Constant):
            text = ast.get_source_segment(self.parsed.python, node) or repr(node.value)
            # ints are exact; a float literal is re-read from its text, never via float
            exact = Decimal(node.value if type(node.value) is int else text.replace("_", ""))
            return +exact, None  # unary plus applies the context: rounding and the 1e99 bound
        if isinstance(node, ast.Name):
            return self.variable(self.parsed.names[node.id])
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return not self.value_of(node.operand)[0], None
            value, unit = self.number(node.operand)
            return (-value if isinstance(node.op, ast.USub) else +value), unit
        if isinstance(node, ast.BoolOp):
            stop = isinstance(node.op, ast.Or)  # `or` stops at the first true operand
            return next((stop for v in node.values if bool(self.value_of(v)[0]) is stop),
                        not stop), None
        if isinstance(node, ast.Compare):
            left, left_node = self.number(node.left), node.left
            for op, right_node in zip(node.ops, node.comparators):
                right = self.number(right_node)
                a, b, _ = common(left, right, "comparing", self.says(left_node, right_node))
                if not _COMPARE[type(op)](a, b):
                    return False, None
                left, left_node = right, right_node
            return True, None
        if isinstance(node, ast.BinOp):
            return self.binary(node)
        return self.call(node)

    def says(self, *nodes: ast.expr) -> tuple[str, ...]:
        return tuple(self.parsed.text(n) for n in nodes)

    def binary(self, node: ast.BinOp) -> tuple[Decimal, Unit | None]:
        if self.relative_change_of_negatives(node):
            self.relative.add(id(node.left))
        (left, lu), (right, ru) = self.number(node.left), self.number(node.right)
        divides = isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod))
        if (divides and right == 0) or (isinstance(node.op, ast.Pow) and left == 0 > right):
            culprit = self.parsed.text(node.right if divides else node.left)
            raise ToolError("DIVISION_BY_ZERO", f"expression {self.parsed.source!r} divides "
                            f"by zero ({culprit} is 0); guard it: `{culprit} != 0 and …`")
        says = self.says(node.left, node.right)
        self.unclear(node, lu, ru)
        if isinstance(node.op, (ast.Add, ast.Sub, ast.Mod)):
            what = "taking the remainder of" if isinstance(node.op, ast.Mod) else "adding"
            a, b, unit = common((left, lu), (right, ru), what, says)
            return _BINARY[type(node.op)](a, b), unit
        restated = self.restated(node, lu, ru, right)
        if restated is not None:
            return _BINARY[type(node.op)](left, right), restated
        if isinstance(node.op, ast.Mult):
            return settle(left * right, product(lu, ru))
        if isinstance(node.op, (ast.Div, ast.FloorDiv)):
            unit, ratio = quotient(lu, ru, says)
            return settle(_BINARY[type(node.op)](left, right), unit, ratio)
        (left, _), (right, _) = settle(left, lu, True), settle(right, ru, True)
        if abs(right) > MAX_EXPONENT:
            raise ToolError("OUT_OF_RANGE", f"expression {self.parsed.source!r}: exponent "
                            f"{right} is beyond ±{MAX_EXPONENT}")
        return left ** right, None  # a power of an amount has no unit to name

    def unclear(self, node: ast.BinOp, lu: Unit | None, ru: Unit | None) -> None:
        """Raise UNCLEAR_ARITHMETIC when the operation means different things to
        different readers of the figures (the module docstring says which)."""
        if isinstance(node.op, (ast.Add, ast.Sub)) and id(node) not in self.relative:
            for side in (node.left, node.right):
                if _in_parentheses(q := self.quantity_of(side)):
                    self.unclear_sign(self.parsed.text(side), q, "arithmetic")
        if isinstance(node.op, (ast.Mult, ast.Div)):
            sides = [self.quantity_of(side) for side in (node.left, node.right)]
            bracketed = [_in_parentheses(q) for q in sides]
            if all(q is not None and q.amount is not None for q in sides) and \
                    bracketed.count(True) == 1 and not any(q.amount < 0 for q, b in
                                                          zip(sides, bracketed) if not b):
                side = node.left if bracketed[0] else node.right
                q = sides[0] if bracketed[0] else sides[1]
                raise ToolError(
                    "UNCLEAR_ARITHMETIC", f"expression {self.parsed.source!r}: "
                    f"{self.parsed.text(side)} is written {q.text} (a negative in "
                    "parentheses) beside a positive figure: whether the share or ratio is of "
                    "the amount or of the signed figure is unclear; use abs() or the sign the "
                    "question asks")
        if isinstance(node.op, ast.Div) and isinstance(node.left, ast.BinOp) and \
                isinstance(node.left.op, ast.Sub) and lu is not None and ru is not None \
                and lu.kind == ru.kind == "percent":
            raise self.points_or_relative("compute the difference in points, or say which "
                                          "is asked")

    def points_or_relative(self, fix: str) -> ToolError:
        """UNCLEAR_ARITHMETIC for a relative change of percentages, and the fix to say."""
        return ToolError("UNCLEAR_ARITHMETIC", f"expression {self.parsed.source!r}: a change "
                         "of percentages over a percentage may mean points or a relative "
                         f"change; {fix}")

    def unclear_sign(self, says: str, q: Quantity, what: str, fix: str = "use abs()") -> None:
        raise ToolError("UNCLEAR_ARITHMETIC", f"expression {self.parsed.source!r}: {says} is "
                        f"written {q.text} (a negative in parentheses): whether the {what} is "
                        f"of the amounts or of the signed figures is unclear; {fix} or the "
                        "sign the question asks")

    def relative_change_of_negatives(self, node: ast.BinOp) -> bool:
        """Whether `node` is `(a - b) / b` of two figures both negative: the same relative
        change of the amounts and of the signed figures ((21,387) from (28,237) is
        -24.26% either way), so not unclear."""
        if not (isinstance(node.op, ast.Div) and isinstance(node.left, ast.BinOp)
                and isinstance(node.left.op, ast.Sub)
                and isinstance(node.left.right, ast.Name) and isinstance(node.right, ast.Name)
                and self.parsed.names.get(node.left.right.id)
                == self.parsed.names.get(node.right.id) is not None):
            return False
        figures = [self.quantity_of(side) for side in (node.left.left, node.left.right)]
        return _both_negative(*figures)

    def quantity_of(self, node: ast.expr) -> Quantity | None:
        """The quantity of `node` when it is a variable; None otherwise."""
        if not isinstance(node, ast.Name) or node.id not in self.parsed.names:
            return None
        name = self.parsed.names[node.id]
        q = self.quantities.get(name) or self.quantities.get(f"${name}")
        return q if isinstance(q, Quantity) else None

    def restated(self, node: ast.BinOp, lu: Unit | None, ru: Unit | None,
                 right: Decimal) -> Unit | None:
        """The unit of `$AMOUNT * 1000` or `$AMOUNT / 1000` (a power of a thousand the
        plan writes): the amount restated in another scale, as a plan converts millions
        to thousands, not made larger; None for any other operation."""
        if not isinstance(node.op, (ast.Mult, ast.Div)) or ru is not None or lu is None \
                or lu.kind == "percent" or not isinstance(node.right, ast.Constant):
            return None
        power = right.adjusted() if right == Decimal(1).scaleb(right.adjusted()) else None
        if power is None or power % 3 or not power:
            return None
        scale = lu.scale - power if isinstance(node.op, ast.Mult) else lu.scale + power
        return Unit(lu.kind, lu.currency, scale) if scale in SCALE_WORDS else None

    def call(self, node: ast.Call) -> tuple[Decimal, Unit | None]:
        name = node.func.id
        if name in _OVER_SERIES:
            return self.over(name, node)
        if name in _OF_TWO:
            return self.of_two(name, node)
        args = [self.number(a) for a in node.args]
        (value, unit) = args[0]
        if name == "abs":
            return abs(value), unit
        places = args[1][0] if len(args) == 2 else Decimal(0)
        if places != places.to_integral_value() or abs(places) > 28:
            raise ToolError("BAD_EXPRESSION", f"expression {self.parsed.source!r}: round() "
                            f"places must be a whole number from -28 to 28, not {places}")
        return value.quantize(Decimal(1).scaleb(-int(places)), rounding=ROUND_HALF_UP), unit

    def over(self, name: str, node: ast.Call) -> tuple[Decimal, Unit | None]:
        """min, max, mean or sum of the arguments, a series argument's figures each."""
        per_arg = [(arg, self.items(arg)) for arg in node.args]
        items = [item for _, found in per_arg for item in found]
        if name in ("mean", "sum") and len(items) > 1:
            for arg, found in per_arg:
                for _, (says, q) in found:
                    if _in_parentheses(q):
                        self.unclear_sign(says, q, name, f"take {name}(abs({self.parsed.text(arg)}))"
                                          if self.series(arg) is not None else "use abs()")
        best, (first, _) = items[0][0], items[0][1]
        for item, (says, _) in items[1:]:
            what = {"mean": "averaging", "sum": "adding"}.get(name, f"taking the {name} of")
            a, b, unit = common(best, item, what, (first, says))
            if name in ("mean", "sum"):
                best = a + b, unit
            else:
                best = (b if (b < a if name == "min" else b > a) else a), unit
        if name == "mean":
            return best[0] / len(items), best[1]
        return best

    def of_two(self, name: str, node: ast.Call) -> tuple[Decimal, Unit | None]:
        """change or percent_change of a series of two figures (a row in each of the two
        periods of its table, earliest first): the later less the earlier, and that over
        the earlier in percent. A series of another length is refused: which two periods
        a change is between, the plan must say."""
        arg = node.args[0]
        says = self.parsed.text(arg)
        if self.series(arg) is None:
            raise ToolError("BAD_EXPRESSION", f"expression {self.parsed.source!r}: {name}() "
                            f"takes a list variable (a row read in every period, period "
                            f"\"all\"), not {says}; of two figures, write ($B - $A)"
                            + (" / $A * 100" if name == "percent_change" else ""))
        items = self.items(arg)
        if len(items) != 2:
            raise ToolError("UNCLEAR_ARITHMETIC", f"expression {self.parsed.source!r}: {says} "
                            f"holds {len(items)} figures, a row in {len(items)} periods: "
                            f"which two a change is between is unclear; EXTRACT the two "
                            "periods the question names and subtract")
        (earlier, (first, q0)), (later, (second, q1)) = items
        negatives = [_in_parentheses(q) for q in (q0, q1)]
        if any(negatives) and not (name == "percent_change" and _both_negative(q0, q1)):
            q, text = (q0, first) if negatives[0] else (q1, second)
            self.unclear_sign(text, q, "change")  # (21,387) from (28,237): -24.26% either way
        b, a, unit = common(later, earlier, "subtracting", (second, first))
        if name == "change":
            return b - a, unit
        if unit is not None and unit.kind == "percent":
            raise self.points_or_relative(f"change({says}) is the difference in points")
        if a == 0:
            raise ToolError("DIVISION_BY_ZERO", f"expression {self.parsed.source!r}: {first} "
                            "is 0: a relative change from zero has no value")
        return (b - a) / a * 100, None

    def items(self, node: ast.expr) -> list[tuple[tuple[Decimal, Unit | None],
                                                  tuple[str, Quantity | None]]]:
        """The figures `node` stands for, each with what it says and its quantity: a
        series variable's every figure, else `node`'s one value."""
        if isinstance(node, ast.Call) and node.func.id == "abs" and len(node.args) == 1 and \
                self.series(node.args[0]) is not None:  # mean(abs($X)): the amounts
            return [((abs(value), unit), (says, None))
                    for (value, unit), (says, _) in self.items(node.args[0])]
        series = self.series(node)
        if series is None:
            return [(self.number(node), (self.parsed.text(node), self.quantity_of(node)))]
        values, quantities = series
        name = self.parsed.text(node)
        if not values:
            raise ToolError("NOT_A_NUMBER", f"expression {self.parsed.source!r}: {name} holds "
                            "no figures")
        found = []
        for i, value in enumerate(values):
            q = quantities[i] if i < len(quantities) else None
            figure = _figure(f"{name.lstrip('$')}[{i}]", value, q)
            if isinstance(figure[0], bool):
                raise ToolError("NOT_A_NUMBER", f"{name}[{i}] is true/false, not a number")
            typed = q if q is not None and q.kind != "date" else None
            found.append((figure, (f"{name}[{i}]", typed)))
        return found

    def series(self, node: ast.expr) -> tuple[list, list] | None:
        """A variable's list value and its figures' quantities; None for anything else."""
        if not isinstance(node, ast.Name) or node.id not in self.parsed.names:
            return None
        name = self.parsed.names[node.id]
        for key in (name, f"${name}"):
            if isinstance(self.variables.get(key), list):
                q = self.quantities.get(name) or self.quantities.get(f"${name}")
                return self.variables[key], (q if isinstance(q, list) else [])
        return None

    def number(self, node: ast.expr) -> tuple[Decimal, Unit | None]:
        value, unit = self.value_of(node)
        if isinstance(value, bool):
            raise ToolError("NOT_A_NUMBER", f"expression {self.parsed.source!r}: "
                            f"{self.parsed.text(node)} is true/false, not a number; "
                            "combine comparisons only with and/or/not")
        return value, unit

    def variable(self, name: str) -> tuple[Decimal | bool, Unit | None]:
        for key in (name, f"${name}"):
            if isinstance(self.variables.get(key), list):
                raise ToolError("NOT_A_NUMBER", f"${name} is a list of "
                                f"{len(self.variables[key])} values (a row in every period), "
                                f"not one number; take mean(${name}), sum(${name}), "
                                f"min(${name}) or max(${name}), or change(${name}) of two")
            if key in self.variables:
                q = self.quantities.get(name) or self.quantities.get(f"${name}")
                return _figure(name, self.variables[key], q)
        known = ", ".join(f"${k.lstrip('$')}" for k in self.variables) or "none"
        raise ToolError("MISSING_INPUT", f"${name} has no value (variables available: "
                        f"{known}); the step that binds ${name} failed or is missing")


def _figure(name: str, value: object, q: Quantity | None) -> tuple[Decimal | bool, Unit | None]:
    """A variable's (or a list item's) value as arithmetic reads it: its quantity's amount
    and unit when typed (a date aside), else the number its text writes, plain."""
    if q is not None and q.kind != "date":
        return +q.amount, unit_of(q)  # +: context bounds
    number = _as_number(name, value)
    return (number if isinstance(number, bool) else +number), None


def _both_negative(a: Quantity | None, b: Quantity | None) -> bool:
    """Whether both figures are typed and negative: a relative change of them is the same
    of the amounts as of the signed figures."""
    return all(q is not None and q.amount is not None and q.amount < 0 for q in (a, b))


def _in_parentheses(q: Quantity | None) -> bool:
    """Whether `q` is a negative figure written in accountants' parentheses."""
    return q is not None and q.amount is not None and q.amount < 0 and \
        bool(_BRACKETED.match(q.text or ""))


def _as_number(name: str, value: object) -> Decimal | bool:
    number = value if isinstance(value, bool) else as_number(value)
    if number is None:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "…"
        raise ToolError("NOT_A_NUMBER", f"${name} is {shown}, not a number; make the step "
                        f"that binds ${name} yield only the number (e.g. capture "
                        r"(\d+(?:\.\d+)?) in its pattern), or compute without it")
    return number


def run_compute(step: ComputeStep, variables: dict[str, object],
                quantities: dict[str, Quantity | None] | None = None) -> ToolOutput:
    """Evaluate a COMPUTE step; a Decimal value becomes a string (in the scale of its
    quantity, when its inputs had units), a bool stays a bool."""
    result, unit = evaluate_typed(step.expression, variables, quantities)
    if isinstance(result, bool):
        return ToolOutput(value=result, confidence="computed")
    value = format_decimal(result)
    return ToolOutput(value=value, confidence="computed",
                      quantity=quantity_of(result, unit, value))


def check_expression(step_id: str, field: str, expression: str) -> list[Finding]:
    """`bad_expression` when `expression` does not parse as COMPUTE reads it."""
    try:
        parse_expression(expression)
    except ToolError as e:
        why = e.message.removeprefix("expression: ")
        return [("bad_expression", f"step {step_id}'s {field}: {why}")]
    return []


def check_compute(step: ComputeStep) -> list[Finding]:
    return check_expression(step.id, "expression", step.expression)


def expression_kind(expression: str) -> str:
    """`bool` when the outermost operator compares or combines with and/or/not, `number`
    otherwise, `value` when the expression does not parse."""
    try:
        body = parse_expression(expression).tree.body
    except ToolError:
        return "value"
    logical = isinstance(body, (ast.Compare, ast.BoolOp)) or (
        isinstance(body, ast.UnaryOp) and isinstance(body.op, ast.Not))
    return "bool" if logical else "number"
