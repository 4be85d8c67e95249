"""A small, safe evaluator for iteration counts and parameters (e.g. ``a``, ``N/256``).

Kernel files come from colleagues, so an expression must never execute code: this module
tokenizes and parses a tiny grammar itself (no ``eval``, no Python ``ast``) and evaluates the
tree with numpy, so every variable may be an array and results broadcast (sweeps).

Grammar::

    expr    := term (('+' | '-') term)*
    term    := unary (('*' | '×' | '·' | '/' | '÷') unary)*
    unary   := ('-' | '+') unary | atom
    atom    := NUMBER | NAME | NAME '(' expr (',' expr)* ')' | '(' expr ')'

Functions: ``min``, ``max`` (two or more arguments), ``ceil``, ``floor``, ``log2`` (one
argument; the base-2 logarithm of a positive number: the trips of a loop that halves its
counter, core.kernel.sass.trip_counts).
Division is true division; wrap it in ``ceil``/``floor`` for integer counts.
"""
from __future__ import annotations

from dataclasses import dataclass
import math
import re

import numpy as np

from gpumodeler.core.errors import ExpressionError, shown

MAX_LENGTH = 2000
MAX_DEPTH = 100
# Depth of the parsed tree: a chain ``a*a*...*a`` parses without recursion but makes a tree
# as deep as it is long, which formatting and evaluation walk recursively.
MAX_TREE_DEPTH = 200

_TOKEN = re.compile(
    r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z_0-9]*)"
    r"|(?P<op>[-+*/()×·÷,]))"
)
_FUNCTIONS = {"min": (2, None), "max": (2, None), "ceil": (1, 1), "floor": (1, 1),
              "log2": (1, 1)}
_OP_NORMAL = {"×": "*", "·": "*", "÷": "/"}


@dataclass(frozen=True)
class _Num:
    value: float


@dataclass(frozen=True)
class _Var:
    name: str


@dataclass(frozen=True)
class _Neg:
    operand: object


@dataclass(frozen=True)
class _Bin:
    op: str
    left: object
    right: object


@dataclass(frozen=True)
class _Call:
    name: str
    args: tuple


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    tokens, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            bad = text[pos:].lstrip()[:1]
            where = len(text) - len(text[pos:].lstrip())
            raise ExpressionError(
                f"unexpected character {bad!r} at position {where + 1} in {shown(text)}; "
                f"valid: numbers, variable names, + - * / ( ), min, max, ceil, floor, log2")
        kind = m.lastgroup
        assert kind is not None  # every alternative of the pattern is a named group
        value = m.group(kind)
        tokens.append((kind, _OP_NORMAL.get(value, value), m.start(kind)))
        pos = m.end()
    return tokens


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0
        self.depth = 0

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else (None, None, len(self.text))

    def take(self, value=None):
        tok = self.peek()
        if tok[0] is None or (value is not None and tok[1] != value):
            want = repr(value) if value else "a value"
            got = "the end" if tok[0] is None else repr(tok[1])
            raise ExpressionError(f"expected {want} but found {got} at position {tok[2] + 1} in {shown(self.text)}")
        self.i += 1
        return tok

    def parse(self):
        if not self.tokens:
            raise ExpressionError("empty expression; give a number or a formula such as 'N/256'")
        node = self.expr()
        if self.i != len(self.tokens):
            tok = self.peek()
            raise ExpressionError(f"unexpected {tok[1]!r} at position {tok[2] + 1} in {shown(self.text)}")
        depth = _tree_depth(node)
        if depth > MAX_TREE_DEPTH:
            raise ExpressionError(f"expression {shown(self.text)} has operations nested {depth} "
                                  f"deep; at most {MAX_TREE_DEPTH} (simplify it)")
        return node

    def _nest(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExpressionError(f"expression nested deeper than {MAX_DEPTH} levels")

    def expr(self):
        self._nest()
        node = self.term()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            node = _Bin(op, node, self.term())
        self.depth -= 1
        return node

    def term(self):
        node = self.unary()
        while self.peek()[1] in ("*", "/"):
            op = self.take()[1]
            node = _Bin(op, node, self.unary())
        return node

    def unary(self):
        if self.peek()[1] in ("-", "+"):
            op = self.take()[1]
            self._nest()
            operand = self.unary()
            self.depth -= 1
            return _Neg(operand) if op == "-" else operand
        return self.atom()

    def atom(self):
        kind, value, pos = self.peek()
        if kind == "num":
            self.take()
            return _Num(float(value))
        if kind == "name":
            self.take()
            if self.peek()[1] == "(":
                if value not in _FUNCTIONS:
                    raise ExpressionError(
                        f"unknown function {value!r} at position {pos + 1}; valid: {', '.join(_FUNCTIONS)}")
                self.take("(")
                args = [self.expr()]
                while self.peek()[1] == ",":
                    self.take(",")
                    args.append(self.expr())
                self.take(")")
                lo, hi = _FUNCTIONS[value]
                if len(args) < lo or (hi is not None and len(args) > hi):
                    want = f"exactly {lo}" if lo == hi else f"at least {lo}"
                    raise ExpressionError(f"{value}() takes {want} argument(s), got {len(args)}")
                return _Call(value, tuple(args))
            if value in _FUNCTIONS:
                raise ExpressionError(f"{value} is a function; call it as {value}(...)")
            return _Var(value)
        if value == "(":
            self.take("(")
            node = self.expr()
            self.take(")")
            return node
        got = "the end" if kind is None else repr(value)
        raise ExpressionError(f"expected a number, a name or '(' but found {got} at position {pos + 1} in {shown(self.text)}")


def _tree_depth(root) -> int:
    """Depth of a parsed tree, walked without recursion."""
    deepest, stack = 0, [(root, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, _Neg):
            stack.append((node.operand, depth + 1))
        elif isinstance(node, _Bin):
            stack += [(node.left, depth + 1), (node.right, depth + 1)]
        elif isinstance(node, _Call):
            stack += [(a, depth + 1) for a in node.args]
    return deepest


def _variables(node, out: set):
    if isinstance(node, _Var):
        out.add(node.name)
    elif isinstance(node, _Neg):
        _variables(node.operand, out)
    elif isinstance(node, _Bin):
        _variables(node.left, out)
        _variables(node.right, out)
    elif isinstance(node, _Call):
        for a in node.args:
            _variables(a, out)


def _eval(node, env):
    if isinstance(node, _Num):
        return node.value
    if isinstance(node, _Var):
        return env[node.name]
    if isinstance(node, _Neg):
        return -_eval(node.operand, env)
    if isinstance(node, _Bin):
        a, b = _eval(node.left, env), _eval(node.right, env)
        if node.op == "+":
            return a + b
        if node.op == "-":
            return a - b
        if node.op == "*":
            return a * b
        if np.any(np.asarray(b) == 0):
            raise ExpressionError("division by zero")
        return a / b
    args = [_eval(a, env) for a in node.args]
    if node.name == "min":
        out = args[0]
        for a in args[1:]:
            out = np.minimum(out, a)
        return out
    if node.name == "max":
        out = args[0]
        for a in args[1:]:
            out = np.maximum(out, a)
        return out
    if node.name == "log2":
        if np.any(np.asarray(args[0]) <= 0):
            raise ExpressionError("log2 of a number that is not positive")
        return np.log2(args[0])
    return np.ceil(args[0]) if node.name == "ceil" else np.floor(args[0])


def _format(node, parent_prec=0) -> str:
    if isinstance(node, _Num):
        v = node.value
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)
    if isinstance(node, _Var):
        return node.name
    if isinstance(node, _Neg):
        return "-" + _format(node.operand, 3)
    if isinstance(node, _Bin):
        prec = 1 if node.op in "+-" else 2
        right_prec = prec + 1 if node.op in "-/" else prec
        text = f"{_format(node.left, prec)} {node.op} {_format(node.right, right_prec)}"
        return f"({text})" if prec < parent_prec else text
    return f"{node.name}({', '.join(_format(a) for a in node.args)})"


class Expression:
    """A parsed expression; immutable and hashable by its normalised text."""

    __slots__ = ("text", "_tree", "variables")

    def __init__(self, text: str | int | float):
        if isinstance(text, bool):
            raise ExpressionError("an expression must be a number or a formula, not a boolean")
        if isinstance(text, (int, float)):
            if not math.isfinite(text):
                raise ExpressionError(f"expression value must be finite, got {text}")
            text = repr(text) if isinstance(text, float) else str(text)
        if not isinstance(text, str):
            raise ExpressionError(f"an expression must be text or a number, got {type(text).__name__}")
        if len(text) > MAX_LENGTH:
            raise ExpressionError(f"expression longer than {MAX_LENGTH} characters")
        self._tree = _Parser(text).parse()
        self.text = _format(self._tree)
        found: set = set()
        _variables(self._tree, found)
        self.variables = frozenset(found)

    def evaluate(self, values: dict | None = None):
        """Value for the given variables (numbers or numpy arrays, which broadcast)."""
        values = values or {}
        missing = sorted(self.variables - set(values))
        if missing:
            given = ", ".join(sorted(values)) or "none"
            raise ExpressionError(
                f"unknown variable(s) {', '.join(missing)} in {shown(self.text)}; "
                f"give a value (e.g. --set {missing[0]}=128); variables given: {given}")
        env = {k: (np.asarray(v, dtype=float) if not isinstance(v, (int, float)) else float(v))
               for k, v in values.items() if k in self.variables}
        with np.errstate(invalid="ignore", over="ignore"):
            return _eval(self._tree, env)

    @property
    def is_constant(self) -> bool:
        return not self.variables

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"Expression({self.text!r})"

    def __eq__(self, other):
        return isinstance(other, Expression) and other.text == self.text

    def __hash__(self):
        return hash(self.text)


def parse(text) -> Expression:
    """Parse ``text`` (or a number) into an :class:`Expression`; raises ExpressionError."""
    return text if isinstance(text, Expression) else Expression(text)
