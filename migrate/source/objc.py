"""A small Objective-C++ reader for graph-building code: recursive descent over the shared token stream.

It reads what MPSGraph code in PyTorch's operations/*.mm is made of -- message sends
``[receiver sel:arg sel2:arg2]`` (nested), C++ calls, member access, literals,
``@[ @1 ]`` arrays, local declarations and assignments, ``return``, ``if``/``else``,
blocks ``^T(params) {...}`` and lambdas ``[&](params) {...}`` -- and nothing more.
Anything else raises ``ObjcSyntaxError`` with the line it stopped at.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from migrate.source.objc_tree import (
    ArrayLit,
    Assign,
    Binary,
    BlockLit,
    Call,
    Cond,
    Decl,
    ExprStmt,
    If,
    Member,
    Name,
    Num,
    ObjcSyntaxError,
    Other,
    Param,
    Return,
    Send,
    Str,
    Tok,
    tokenize,
    Unary,
)

__all__ = [  # the reader: its syntax tree and tokens (objc_tree), and the parser
    "ArrayLit",
    "Assign",
    "Binary",
    "BlockLit",
    "Call",
    "Cond",
    "Decl",
    "ExprStmt",
    "If",
    "Member",
    "Name",
    "Num",
    "ObjcSyntaxError",
    "Other",
    "Param",
    "parse_statements",
    "Parser",
    "Return",
    "Send",
    "Str",
    "Tok",
    "tokenize",
    "Unary",
]

_MODIFIERS = {"const", "static", "unsigned", "signed", "volatile", "struct", "__block", "constexpr"}
_BINARY = [
    ("||",),
    ("&&",),
    ("|",),
    ("^",),
    ("&",),
    ("==", "!="),
    ("<", ">", "<=", ">="),
    ("<<", ">>"),
    ("+", "-"),
    ("*", "/", "%"),
]
_LOOPS = {"for", "while", "do", "switch", "goto", "try"}


@dataclass
class Parser:
    toks: list[Tok]
    i: int = 0
    blocks: list[BlockLit] = field(default_factory=list)  # every block/lambda literal met

    # -------------------------------------------------------------- helpers
    @property
    def tok(self) -> Tok:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, *texts: str) -> bool:
        t = self.tok
        return t.kind in ("op", "id") and t.text in texts

    def take(self) -> Tok:
        t = self.tok
        self.i += 1
        return t

    def expect(self, text: str) -> Tok:
        if not self.at(text):
            raise ObjcSyntaxError(f"expected {text!r}, found {self.tok.text or 'end of input'!r}", self.tok.line)
        return self.take()

    def skip_balanced(self) -> None:
        """Skip a (...), [...] or {...} group starting at the current token."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        close = pairs[self.tok.text]
        depth = 0
        while self.tok.kind != "eof":
            t = self.take()
            if t.kind == "op" and t.text in pairs:
                depth += 1
            elif t.kind == "op" and t.text in pairs.values():
                depth -= 1
                if depth == 0:
                    return
        raise ObjcSyntaxError(f"unclosed group, expected {close!r}", self.tok.line)

    # ----------------------------------------------------------- statements
    def statements(self, until: str | None = "}") -> tuple:
        out = []
        while not (self.tok.kind == "eof" or (until and self.at(until))):
            s = self.statement()
            if isinstance(s, tuple):
                out.extend(s)
            elif s is not None:
                out.append(s)
        return tuple(out)

    def compound(self) -> tuple:
        if self.at("{"):
            self.take()
            body = self.statements("}")
            self.expect("}")
            return body
        s = self.statement()
        return s if isinstance(s, tuple) else (s,) if s is not None else ()

    def statement(self):
        t = self.tok
        if t.kind == "pp":
            self.take()
            return Other(
                "preprocessor " + t.text.split()[0].lstrip("#").strip() if t.text else "preprocessor",
                t.line,
                " ".join(t.text.split()),
            )
        if self.at(";"):
            self.take()
            return None
        if self.at("{"):
            return If(Name("true", t.line), self.compound(), (), t.line)
        if self.at("@") and self.peek().text == "autoreleasepool":
            self.take()
            self.take()
            return If(Name("true", t.line), self.compound(), (), t.line)
        if t.kind == "id" and t.text == "return":
            self.take()
            value = None if self.at(";") else self.expression()
            self.expect(";")
            return Return(value, t.line)
        if t.kind == "id" and t.text == "if":
            self.take()
            if self.at("constexpr"):
                self.take()
            self.expect("(")
            cond = self.expression()
            self.expect(")")
            then = self.compound()
            other: tuple = ()
            if self.at("else"):
                self.take()
                other = self.compound()
            return If(cond, then, other, t.line)
        if t.kind == "id" and t.text in _LOOPS:
            self.take()
            while not self.at("{", ";") and self.tok.kind != "eof":
                if self.at("("):
                    self.skip_balanced()
                else:
                    self.take()
            if self.at("{"):
                self.skip_balanced()
            else:
                self.take()
            return Other(t.text, t.line)
        if t.kind == "id" and t.text in ("using", "typedef", "namespace", "break", "continue"):
            while not self.at(";") and self.tok.kind != "eof":
                self.take()
            self.take()
            return Other(t.text, t.line)
        decl = self.try_declaration()
        if decl is not None:
            return decl
        expr = self.expression()
        if self.at("=", "+=", "-=", "*=", "/="):
            op = self.take().text
            value = self.expression()
            self.expect(";")
            if op != "=":
                value = Binary(op[0], expr, value, t.line)
            return Assign(expr, value, t.line)
        if isinstance(expr, Call) and isinstance(expr.func, Name) and expr.func.id.isupper() and not self.at(";"):
            return ExprStmt(expr, t.line)  # a statement-like macro: C10_DIAGNOSTIC_PUSH_...(...)
        self.expect(";")
        return ExprStmt(expr, t.line)

    def try_declaration(self):
        """``Type [*&] name [= init];`` -- a type is words, ``::``, ``<...>`` and pointer marks."""
        start = self.i
        words = []
        have_type = False
        while True:
            t = self.tok
            if t.kind == "id" and t.text in _MODIFIERS:
                words.append(self.take().text)
            elif t.kind == "id" and not have_type:
                words.append(self.take().text)
                have_type = True
            elif self.at("::") and have_type:
                words.append(self.take().text)
                have_type = False
            elif self.at("<") and have_type:
                depth = 0
                while True:
                    tt = self.take()
                    words.append(tt.text)
                    if tt.text == "<":
                        depth += 1
                    elif tt.text == ">":
                        depth -= 1
                        if depth == 0:
                            break
                    elif tt.text == ">>":
                        depth -= 2
                        if depth <= 0:
                            break
                    if self.tok.kind == "eof" or tt.text in (";", "{", "}"):
                        self.i = start
                        return None
            elif self.at("*", "&", "^") and have_type:
                words.append(self.take().text)
            else:
                break
        t = self.tok
        if t.kind == "id" and have_type and self.peek().text in ("=", ";", ","):
            base = " ".join(w for w in words if w not in ("*", "&"))
            decls = []
            while True:
                t = self.tok
                name = self.take().text
                init = None
                if self.at("="):
                    self.take()
                    init = self.expression()
                decls.append(Decl(" ".join(words) if not decls else base + "*", name, init, t.line))
                if not self.at(","):
                    break
                self.take()
                while self.at("*", "&"):
                    self.take()
            self.expect(";")
            return decls[0] if len(decls) == 1 else tuple(decls)
        self.i = start
        return None

    # ---------------------------------------------------------- expressions
    def expression(self):
        cond = self.binary(0)
        if self.at("?"):
            line = self.take().line
            then = self.expression()
            self.expect(":")
            other = self.expression()
            return Cond(cond, then, other, line)
        return cond

    def binary(self, level: int):
        if level == len(_BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while self.tok.kind == "op" and self.tok.text in _BINARY[level]:
            # "]" after "<"...">" never happens here; ObjC selectors stop expressions at an id
            op = self.take()
            right = self.binary(level + 1)
            left = Binary(op.text, left, right, op.line)
        return left

    def unary(self):
        t = self.tok
        if self.at("-", "+", "!", "~", "*", "&"):
            self.take()
            return Unary(t.text, self.unary(), t.line)
        if self.at("^"):
            return self.postfix(self.block_literal())
        return self.postfix(self.primary())

    def postfix(self, e):
        while True:
            t = self.tok
            if self.at("("):
                e = Call(e, self.call_args(), t.line)
            elif self.at(".", "->"):
                self.take()
                name = self.take()
                if name.kind != "id":
                    raise ObjcSyntaxError("expected a member name", name.line)
                e = Member(e, name.text, t.text == "->", t.line)
                if self.at("<") and self.peek().kind == "id" and self.peek(2).text == ">":
                    self.take()
                    self.take()
                    self.take()  # x.to<double>()
            elif self.at("[") and not self._lambda_ahead():
                self.take()
                idx = self.expression()
                self.expect("]")
                e = Call(Name("operator[]", t.line), (e, idx), t.line)
            else:
                return e

    def call_args(self) -> tuple:
        self.expect("(")
        args = []
        while not self.at(")"):
            args.append(self.expression())
            if not self.at(")"):
                self.expect(",")
        self.expect(")")
        return tuple(args)

    def primary(self):
        t = self.tok
        if t.kind == "num":
            self.take()
            return Num(_number(t.text), t.text, t.line)
        if t.kind == "str":
            self.take()
            return Str(t.text, t.line)
        if self.at("@"):
            self.take()
            if self.at("["):
                self.take()
                items = []
                while not self.at("]"):
                    items.append(self.expression())
                    if not self.at("]"):
                        self.expect(",")
                self.expect("]")
                return ArrayLit(tuple(items), t.line)
            if self.at("("):
                self.take()
                e = self.expression()
                self.expect(")")
                return e
            if self.tok.kind == "num":
                n = self.take()
                return Num(_number(n.text), n.text, n.line)
            raise ObjcSyntaxError("unsupported @-literal", t.line)
        if self.at("(") and self._cast_ahead():
            self.take()
            while not self.at(")"):
                self.take()
            self.take()
            return self.unary()
        if self.at("("):
            self.take()
            e = self.expression()
            self.expect(")")
            return e
        if self.at("["):
            if self._lambda_ahead():
                return self.lambda_literal()
            return self.message_send()
        if t.kind == "id":
            parts = [self.take().text]
            while self.at("::") and self.peek().kind == "id":
                self.take()
                parts.append(self.take().text)
            if self.at("<") and self.peek().kind == "id" and self.peek(2).text == ">" and self.peek(3).text == "(":
                self.take()
                self.take()
                self.take()  # f<T>(...)
            elif self.at("<") and (k := self._template_args_end()) and self.peek(k).text == "(":
                parts[-1] += "<" + "".join(self.take().text for _ in range(k - 1))[1:] + ">"  # const_cast<Tensor&>(t)
                self.take()
            return Name("::".join(parts), t.line)
        if self.at("::") and self.peek().kind == "id":
            self.take()
            return self.primary()
        raise ObjcSyntaxError(f"unexpected {t.text or 'end of input'!r}", t.line)

    def _template_args_end(self) -> int:
        """At ``<``: the offset of the token after a closing ``>`` of plain type words (``<Tensor&>``,
        ``<double>``), or 0."""
        k = 1
        while self.peek(k).kind == "id" or self.peek(k).text in ("::", "*", "&", ","):
            k += 1
        return k + 1 if k > 1 and self.peek(k).text == ">" else 0

    def _cast_ahead(self) -> bool:
        """``(NSInteger)x``, ``(float*)p``: a parenthesised type followed by an operand."""
        k = 1
        if self.peek(k).kind != "id":
            return False
        while self.peek(k).kind == "id" or self.peek(k).text in ("::", "*", "&"):
            k += 1
        if self.peek(k).text != ")":
            return False
        first = self.peek(1).text
        nxt = self.peek(k + 1)
        typey = first[:1].isupper() or first in (
            "float",
            "double",
            "int",
            "long",
            "bool",
            "char",
            "short",
            "unsigned",
            "int64_t",
            "int32_t",
            "uint32_t",
            "size_t",
            "id",
        )
        return typey and (nxt.kind in ("id", "num") or nxt.text in ("(", "[", "@"))

    def _lambda_ahead(self) -> bool:
        if not self.at("["):
            return False
        nxt = self.peek()
        return nxt.text in ("&", "=", "]", "this") and (nxt.text != "]" or self.peek(2).text == "(")

    def message_send(self):
        line = self.expect("[").line
        receiver = self.postfix(self.primary())
        parts: list[str] = []
        args: list = []
        if self.tok.kind == "id" and self.peek().text != ":":
            sel = self.take().text
            self.expect("]")
            return Send(receiver, sel, (), line)
        while not self.at("]"):
            # a selector piece may span a line break inside a pasted macro ("func_stub##\n WithPrimaryTensor")
            name = self.take()
            if name.kind != "id":
                raise ObjcSyntaxError(f"expected a selector piece, found {name.text!r}", name.line)
            self.expect(":")
            parts.append(name.text + ":")
            args.append(self.expression())
        self.expect("]")
        return Send(receiver, "".join(parts), tuple(args), line)

    def params(self) -> tuple[Param, ...]:
        self.expect("(")
        out = []
        while not self.at(")"):
            words = []
            depth = 0
            while not (depth == 0 and self.at(",", ")")):
                t = self.take()
                if t.kind == "eof":
                    raise ObjcSyntaxError("unclosed parameter list", t.line)
                depth += t.text in ("(", "<", "[") and 1 or 0
                depth -= t.text in (")", ">", "]") and 1 or 0
                words.append(t.text)
            if words:
                name = words[-1]
                out.append(Param(_join_type(words[:-1]), name))
            if self.at(","):
                self.take()
        self.expect(")")
        return tuple(out)

    def _body(self) -> tuple:
        self.expect("{")
        body = self.statements("}")
        self.expect("}")
        return body

    def block_literal(self) -> BlockLit:
        line = self.expect("^").line
        # optional return type before the parameter list: ^MPSGraphTensor*(...)
        while not self.at("(", "{"):
            self.take()
        params = self.params() if self.at("(") else ()
        b = BlockLit(params, self._body(), line)
        self.blocks.append(b)
        return b

    def lambda_literal(self) -> BlockLit:
        line = self.tok.line
        self.skip_balanced()  # captures
        params = self.params() if self.at("(") else ()
        while self.at("mutable") or self.at("->"):
            self.take()
            while not self.at("{"):
                self.take()
        b = BlockLit(params, self._body(), line, lambda_=True)
        self.blocks.append(b)
        return b


def _join_type(words: list[str]) -> str:
    return "".join(w if w in ("*", "&", "::", "<", ">") else (" " + w) for w in words).strip()


def _number(text: str) -> float | int:
    t = text.rstrip("fFuUlL")
    if t.lower().startswith("0x"):
        return int(t, 16)
    if any(c in t for c in ".eE"):
        return float(t)
    return int(t)


def parse_statements(text: str, first_line: int = 1) -> tuple[tuple, list[BlockLit]]:
    """Statements of a function body (without its braces) and every block literal in it."""
    p = Parser(tokenize(text, first_line))
    body = p.statements(None)
    return body, p.blocks
