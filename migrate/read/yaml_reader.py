"""Fast, position-exact reader for ``native_functions.yaml``.

The reference is a line scanner specialised to the file's shape: a top-level
block sequence of ``- func: ...`` mappings whose values are plain or quoted
scalars, flow lists (``[a, b]``), block lists, ``{}``, or one nested block
mapping (``dispatch:``, ``ufunc_inner_loop:``).  Anything else YAML could
express (anchors, multi-line scalars, ...) is reported as a ``ParseError``
rather than guessed at, so what it returns is what a YAML loader would see.
Entries of the canonical shape (nearly all of them) take a regex fast path
that builds the same objects (``yaml_fast``); tests check both agree on the
real files.  The scanner's scalar grammar is in ``yaml_scalars``, what an entry
may say (keys, schema string) in ``yaml_schema``.

Positions: lines and columns are 1-based, columns count characters (code
points), ``end_column`` is exclusive; ``start``/``end`` are byte offsets.
"""

from __future__ import annotations

import gc
import re
from pathlib import Path

from migrate.model import DispatchLine, NativeEntry, NativeYaml, ParseError, Span
from migrate.read.yaml_fast import _dispatch_spans, _make_dispatch, _make_entry, _make_span, _new, _set, fast_entry
from migrate.read.yaml_scalars import (
    _BAD_PLAIN_START,
    _BOOLS,
    _DASH,
    _HASH,
    _SPACE,
    _Fail,
    _flow_item,
    _quoted,
    _trailing_comment,
)
from migrate.read.yaml_schema import KNOWN_KEYS, _args_have_out, _split_schema

_KEY_RE = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*\Z")
_KERNEL_RE = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*::)*[A-Za-z_][A-Za-z0-9_]*\Z")
_ODD_BREAK = re.compile(b"\r|\xc2\x85|\xe2\x80[\xa8\xa9]")  # CR, NEL, LS, PS: line breaks for YAML


# ------------------------------------------------------------------ scalars
def _scalar(line: bytes, pos: int) -> tuple[object, int, int, bytes | None]:
    """Parse the YAML scalar (or flow list) starting at/after ``pos`` in ``line``.

    Returns (value, vstart, vend, comment): value is None (empty), str or
    list[str]; [vstart, vend) is the value's text within the line (inside the
    quotes for a quoted scalar); comment is the text after '#', if any.
    """
    n = len(line)
    while pos < n and line[pos] == _SPACE:
        pos += 1
    if pos == n:
        return None, pos, pos, None
    c = line[pos]
    if c == _HASH:
        return None, pos, pos, line[pos + 1 :]
    if c == 34 or c == 39:  # " or '
        value, close = _quoted(line, pos)
        return value, pos + 1, close, _trailing_comment(line, close + 1)
    if c == 91:  # [
        close = line.find(b"]", pos)
        if close < 0 or b"[" in line[pos + 1 : close]:
            raise _Fail(pos, "unsupported flow sequence (unclosed or nested '[')")
        items = [_flow_item(line, pos + 1 + k, item) for k, item in _split_with_offsets(line[pos + 1 : close])]
        if items == [""]:
            items = []
        elif "" in items:
            raise _Fail(pos, "empty item in flow sequence")
        return items, pos, close + 1, _trailing_comment(line, close + 1)
    if c == 123:  # {: only the empty flow mapping "{}" is supported
        close = line.find(b"}", pos)
        if close < 0 or line[pos + 1 : close].strip(b" "):
            raise _Fail(pos, "unsupported flow mapping (only '{}' is supported)")
        return {}, pos, close + 1, _trailing_comment(line, close + 1)
    if c in _BAD_PLAIN_START or (c in b"-?:" and (pos + 1 == n or line[pos + 1] == _SPACE)):
        raise _Fail(pos, f"unsupported YAML syntax {chr(c)!r} here")
    hash_at = line.find(b" #", pos)
    end = hash_at if hash_at >= 0 else n
    comment = line[hash_at + 2 :] if hash_at >= 0 else None
    while end > pos and line[end - 1] == _SPACE:
        end -= 1
    text = line[pos:end]
    bad = text.find(b": ")
    if bad >= 0 or text.endswith(b":"):
        raise _Fail(
            pos + (bad if bad >= 0 else len(text) - 1),
            "':' followed by a space inside a plain value (YAML reads a nested mapping)",
        )
    return text.decode("utf-8", "replace"), pos, end, comment


def _split_with_offsets(text: bytes) -> list[tuple[int, bytes]]:
    out, at = [], 0
    for part in text.split(b","):
        out.append((at, part))
        at += len(part) + 1
    return out


def _span(path: str, line: int, a: int, b: int, start: int, end: int) -> Span:
    """Single-line span; ``a``/``b`` are 1-based columns."""
    return _make_span(path=path, line=line, column=a, end_line=line, end_column=b, start=start, end=end)  # type: ignore[no-any-return]


# ----------------------------------------------------------------- entries
class _Entry:
    """Mutable accumulator for one ``- func:`` entry."""

    __slots__ = (
        "line",
        "start",
        "last_line",
        "last_end",
        "last_col",
        "map_indent",
        "values",
        "key_lines",
        "func_line",
        "dispatch",
        "dispatch_line",
        "block_key",
        "block_kind",
        "nested_indent",
        "block_items",
    )

    def __init__(self, line: int, start: int) -> None:
        self.line, self.start = line, start
        self.last_line, self.last_end, self.last_col = line, start + 1, 2
        self.map_indent: int | None = None
        self.values: dict[str, object] = {}
        self.key_lines: dict[str, int] = {}
        self.func_line = 0
        self.dispatch: list[DispatchLine] = []
        self.dispatch_line: int | None = None
        self.block_key: str | None = None  # key whose (empty) value may open a nested block
        self.block_kind: str | None = None  # "map" | "seq" once the block's first line is seen
        self.nested_indent: int | None = None
        self.block_items: list[str] = []


class _Scanner:
    def __init__(self, data: bytes, path: str) -> None:
        self.data, self.path = data, path
        self.entries: list[NativeEntry] = []
        self.errors: list[ParseError] = []
        self.cur: _Entry | None = None
        self.skipping = False  # after a top-level error: skip its indented lines quietly
        self.names: dict[bytes, str] = {}  # interned key / dispatch-key strings
        self.key_lists: dict[bytes, list[str]] = {}  # "K1, K2" -> its interned keys
        # the line being scanned (set for the full path; spans and errors use it)
        self.lineno = 0
        self.line = b""
        self.line_start = 0
        self.ascii = True
        self.plain = False  # the whole file is ASCII without tabs or CRs
        self.has_cr = True  # the file has a "\r" somewhere

    # ---- positions on the current line
    def col(self, byte_col: int) -> int:
        if self.ascii:
            return byte_col + 1
        return len(self.line[:byte_col].decode("utf-8", "replace")) + 1

    def span(self, a: int, b: int) -> Span:
        s = self.line_start
        return _span(self.path, self.lineno, self.col(a), self.col(b), s + a, s + b)

    def error(self, byte_col: int, message: str) -> None:
        self.errors.append(ParseError(self.path, self.lineno, self.col(byte_col), message))

    def name(self, raw: bytes) -> str:
        got = self.names.get(raw)
        if got is None:
            got = self.names[raw] = raw.decode()
        return got

    # ---- driver
    def run(self, fast: bool = True) -> NativeYaml:
        data = self.data
        bad = _first_bad_utf8(data)
        if bad is not None:
            ls = data.rfind(b"\n", 0, bad) + 1
            self.lineno, self.line = data.count(b"\n", 0, bad) + 1, data[ls:bad]
            self.ascii = self.line.isascii()
            self.error(len(self.line), "invalid UTF-8 byte")
        self.has_cr = b"\r" in data
        if not fast:
            self.scan_lines(0, len(data), 1)
            return self.result()
        # Every "\n- " starts a top-level entry: try each entry's text on the
        # canonical-shape fast path, else scan its lines.
        self.plain = not self.has_cr and data.isascii() and b"\t" not in data
        chunks = data.split(b"\n- ")
        first = chunks[0]
        self.scan_lines(0, len(first), 1)
        off, lineno = len(first) + 1, first.count(b"\n") + 2
        for c in chunks[1:]:
            newlines = c.count(b"\n")
            if not fast_entry(self, c, lineno, off, newlines):
                self.scan_lines(off, off + 2 + len(c), lineno)
            lineno += newlines + 1
            off += len(c) + 3
        return self.result()

    def result(self) -> NativeYaml:
        errors = sorted(self.errors, key=lambda e: e.line)  # stable: same-line errors keep their order
        return NativeYaml(self.path, tuple(self.entries), tuple(errors))

    def scan_lines(self, a: int, b: int, lineno: int) -> None:
        """The full line scanner over data[a:b], whose first line is ``lineno``."""
        offset = a
        for raw in self.data[a:b].split(b"\n"):
            start = offset
            offset += len(raw) + 1
            line = raw[:-1] if raw.endswith(b"\r") else raw
            body = line.lstrip(b" ")
            ascii_line = line.isascii()
            odd = (self.has_cr and b"\r" in line) or (not ascii_line and _ODD_BREAK.search(line) is not None)
            if odd or (body and body[0] != _HASH):
                self.lineno, self.line, self.line_start, self.ascii = lineno, line, start, ascii_line
                self.scan_line(line, len(line) - len(body), odd)
            lineno += 1
        self.finish_entry()

    def scan_line(self, line: bytes, indent: int, odd_break: bool) -> None:
        tab = line.find(b"\t")
        if odd_break or tab >= 0:
            if indent == 0:  # whatever it was, it ends the entry before it
                self.finish_entry()
                self.skipping = True
            if odd_break:
                brk = _ODD_BREAK.search(line)
                assert brk is not None
                self.error(brk.start(), "a line break other than LF / CRLF (YAML splits the line here)")
            else:
                self.error(tab, "tab character (not supported: YAML forbids tabs in indentation; use spaces)")
            return
        try:
            if indent == 0:
                self.top_level(line)
            elif not self.skipping:
                self.indented(line, indent)
        except _Fail as f:
            self.error(f.col, f.message)

    def fast_dispatch(self, block: bytes, ln: int, at: int, mixed: bool) -> tuple[DispatchLine, ...]:
        """The DispatchLines of a fast-path dispatch block (``at``: its data offset; ``ln``: the line before
        it); ``mixed``: comment or blank lines among them.  Their spans are made when first read."""
        names, lists, path, new, set_ = self.names, self.key_lists, self.path, _new, _set
        out = []
        for line in block[:-1].split(b"\n"):
            ln += 1
            if mixed and line.lstrip(b" ")[:1] in (b"#", b""):
                at += len(line) + 1
                continue
            keys_b, _, kernel_b = line[4:].partition(b": ")
            if mixed:
                kernel_b = kernel_b.partition(b" ")[0]  # before a comment
            key = names.get(keys_b)
            if key is not None:  # one key, met before
                keys: tuple[str, ...] = (key,)
            else:
                group = lists.get(keys_b)
                if group is None:
                    group = lists[keys_b] = [names.get(k) or self.name(k) for k in keys_b.split(b", ")]
                keys = tuple(group)
            kernel = kernel_b.decode()
            d = new(DispatchLine)  # model.instance, inlined
            set_(
                d,
                "__dict__",
                {"keys": keys, "kernel": kernel, "_spans": (_dispatch_spans, path, ln, at + 4, keys, kernel)},
            )
            out.append(d)
            at += len(line) + 1
        return tuple(out)

    def note_last_line(self, line: bytes) -> None:
        cur = self.cur
        assert cur is not None
        n = len(line.rstrip(b" "))
        cur.last_line, cur.last_end, cur.last_col = self.lineno, self.line_start + n, self.col(n)

    def top_level(self, line: bytes) -> None:
        self.finish_entry()
        if line[0] != _DASH or (len(line) > 1 and line[1] != _SPACE):
            self.skipping = True
            raise _Fail(0, "expected '- func: ...' (a new entry) at column 1")
        self.skipping = False
        cur = self.cur = _Entry(self.lineno, self.line_start)
        rest = line[1:].lstrip(b" ")
        if rest and rest[0] != _HASH:
            cur.map_indent = len(line) - len(rest)
            self.note_last_line(line)
            self.key_line(line, cur.map_indent)

    def indented(self, line: bytes, indent: int) -> None:
        cur = self.cur
        if cur is None:
            self.skipping = True
            raise _Fail(indent, "indented line outside any '- func:' entry")
        if cur.map_indent is None:
            cur.map_indent = indent
        mi = cur.map_indent
        self.note_last_line(line)
        if indent == mi:
            if line[indent] == _DASH and (len(line) == indent + 1 or line[indent + 1] == _SPACE):
                self.nested(line, indent, same_level=True)
            else:
                self.close_block()
                self.key_line(line, indent)
        elif indent > mi:
            self.nested(line, indent, same_level=False)
        else:
            raise _Fail(indent, f"bad indentation: expected column {mi + 1} (entry keys) or deeper")

    # ---- "key: value" at entry level
    def key_line(self, line: bytes, at: int) -> None:
        colon = line.find(b":", at)
        if colon < 0:
            raise _Fail(at, "expected 'key: value'")
        if colon + 1 < len(line) and line[colon + 1] != _SPACE:
            raise _Fail(colon, "expected a space after ':'")
        key_b = line[at:colon].rstrip(b" ")
        if not _KEY_RE.match(key_b):
            raise _Fail(at, f"unsupported key {key_b.decode('utf-8', 'replace')!r}")
        value, vs, _, _ = _scalar(line, colon + 1)
        self.set_value(self.name(key_b), at, value)
        if isinstance(value, (list, str)) and key_b == b"dispatch":
            raise _Fail(vs, "'dispatch:' must be followed by an indented block of 'KEY: kernel' lines")

    def set_value(self, key: str, at: int, value: object) -> None:
        """Record ``key: value`` of the current entry (the key at byte column ``at``)."""
        cur = self.cur
        assert cur is not None
        lineno = self.lineno
        if key in cur.key_lines:
            self.error(at, f"duplicate key {key!r} in this entry (YAML keeps the last one)")
        elif key not in KNOWN_KEYS:
            self.error(at, f"unknown key {key!r} (torchgen rejects it)")
        cur.key_lines[key] = lineno
        cur.values[key] = value
        if key == "func":
            cur.func_line = lineno
        elif key == "dispatch":
            cur.dispatch_line = lineno
            cur.dispatch = []
        if value is None:
            cur.block_key, cur.block_kind, cur.nested_indent, cur.block_items = key, None, None, []
        else:
            cur.block_key = None

    def close_block(self) -> None:
        cur = self.cur
        if cur is not None:
            if cur.block_key is not None and cur.block_kind == "seq":
                cur.values[cur.block_key] = cur.block_items
            cur.block_key = None

    # ---- lines inside a nested block
    def nested(self, line: bytes, indent: int, same_level: bool) -> None:
        cur = self.cur
        assert cur is not None
        key = cur.block_key
        is_item = line[indent] == _DASH and (len(line) == indent + 1 or line[indent + 1] == _SPACE)
        if key is None:
            if same_level:
                raise _Fail(indent, "unexpected '- ' list item (no key with an empty value above it)")
            raise _Fail(indent, "unexpected indentation (continuation lines are not supported)")
        if key == "dispatch" and is_item:
            raise _Fail(indent, "'dispatch:' must be a block of 'KEY: kernel' lines, not a list")
        if cur.block_kind is None:
            cur.block_kind = "seq" if is_item else "map"
            cur.nested_indent = indent
            if not is_item:
                cur.values[key] = {}
        elif indent != cur.nested_indent:
            raise _Fail(indent, f"bad indentation: expected column {cur.nested_indent + 1} in the '{key}:' block")  # type: ignore[operator]
        if cur.block_kind == "seq":
            if not is_item:
                raise _Fail(indent, f"expected '- item' in the '{key}:' list")
            value, _, _, _ = _scalar(line, indent + 1)
            if not isinstance(value, str):
                raise _Fail(indent, "unsupported list item (expected a plain or quoted scalar)")
            cur.block_items.append(value)
            return
        if same_level or is_item:
            raise _Fail(indent, f"expected 'KEY: value' in the '{key}:' block")
        if key == "dispatch":
            self.dispatch_line(line, indent)
            return
        colon = line.find(b":", indent)
        if colon < 0 or (colon + 1 < len(line) and line[colon + 1] != _SPACE):
            raise _Fail(indent, f"expected 'KEY: value' in the '{key}:' block")
        value, _, _, _ = _scalar(line, colon + 1)
        mapping = cur.values[key]
        assert isinstance(mapping, dict)
        mapping[line[indent:colon].strip(b" ").decode("utf-8", "replace")] = value

    def dispatch_line(self, line: bytes, indent: int) -> None:
        cur = self.cur
        assert cur is not None
        colon = line.find(b":", indent)
        if colon < 0:
            raise _Fail(indent, "dispatch line without ':' (expected 'KEY1, KEY2: kernel')")
        if colon + 1 < len(line) and line[colon + 1] != _SPACE:
            raise _Fail(colon, "expected a space after ':' in dispatch line")
        if line[indent] in b"\"'":
            raise _Fail(indent, "quoted dispatch keys are not supported")
        value, vs, ve, _ = _scalar(line, colon + 1)
        if not isinstance(value, str) or not value:
            raise _Fail(vs, "dispatch line needs a kernel name after ':'")
        keys: list[str] = []
        key_spans: list[Span] = []
        for off, part in _split_with_offsets(line[indent:colon]):
            body = part.strip(b" ")
            a = indent + off + len(part) - len(part.lstrip(b" "))
            if not _KEY_RE.match(body):
                raise _Fail(a, f"bad dispatch key {body.decode('utf-8', 'replace')!r}")
            keys.append(self.name(body))
            key_spans.append(self.span(a, a + len(body)))
        if not _KERNEL_RE.match(value):
            self.error(vs, f"kernel {value!r} is not a (namespaced) C++ identifier")
        whole_end = ve + 1 if line[vs - 1] in b"\"'" else ve
        cur.dispatch.append(
            _make_dispatch(
                keys=tuple(keys),
                kernel=value,
                span=self.span(indent, whole_end),
                key_spans=tuple(key_spans),
                kernel_span=self.span(vs, ve),
            )
        )

    # ---- closing an entry
    def finish_entry(self) -> None:
        cur = self.cur
        if cur is None:
            return
        self.close_block()
        self.cur = None
        v = cur.values
        func = v.get("func")
        if not isinstance(func, str) or not func:
            self.errors.append(ParseError(self.path, cur.line, 1, "entry without a 'func:' schema string"))
            return
        name, overload, args = _split_schema(func)
        if args is None or not name:
            self.errors.append(
                ParseError(
                    self.path, cur.func_line, 1, f"invalid function schema (expected 'name(args) -> returns'): {func!r}"
                )
            )
        tags = v.get("tags", ())
        if isinstance(tags, str):
            tags = (tags,)
        elif not isinstance(tags, (list, tuple)):
            self.errors.append(
                ParseError(self.path, cur.key_lines["tags"], 1, "tags must be a name or a list of names")
            )
            tags = ()
        self.entries.append(
            _make_entry(
                func=func,
                name=name,
                overload=overload,
                span=_make_span(
                    path=self.path,
                    line=cur.line,
                    column=1,
                    end_line=cur.last_line,
                    end_column=cur.last_col,
                    start=cur.start,
                    end=cur.last_end,
                ),
                func_line=cur.func_line,
                dispatch=tuple(cur.dispatch),
                dispatch_line=cur.dispatch_line,
                dispatch_null=cur.dispatch_line is not None and v.get("dispatch") is None,
                structured=self.flag(cur, "structured"),
                structured_delegate=_opt_str(v.get("structured_delegate")),
                structured_inherits=_opt_str(v.get("structured_inherits")),
                ufunc_inner_loop=bool(v.get("ufunc_inner_loop")),
                tags=tuple(tags),
                is_inplace=name.endswith("_") and not name.endswith("__"),
                is_out=args is not None and _args_have_out(args),
                manual_kernel_registration=self.flag(cur, "manual_kernel_registration"),
            )
        )

    def flag(self, cur: _Entry, key: str) -> bool:
        raw = cur.values.get(key)
        if raw is None:
            return False
        if isinstance(raw, str) and raw in _BOOLS:
            return _BOOLS[raw]
        self.errors.append(ParseError(self.path, cur.key_lines[key], 1, f"{key} must be True or False, got {raw!r}"))
        return False


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _first_bad_utf8(data: bytes) -> int | None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return None


def effective_dispatch(entry: NativeEntry) -> dict[str, str]:
    """Dispatch key -> kernel name (no namespace), as torchgen's BackendIndex holds it.

    Mirrors NativeFunction.from_yaml: an explicit dispatch table wins (later
    lines override earlier ones; ``dispatch: {}`` means no kernels); without
    one, an entry that is neither structured nor a structured_delegate gets
    ``CompositeImplicitAutograd: <cpp name>`` ("<name>", or "<name>_out" for an
    out= function); ufunc_inner_loop adds CPU/CUDA ``ufunc_<name>_<KEY>``.
    """
    out: dict[str, str] = {}
    if entry.dispatch_line is not None and not entry.dispatch_null:
        for d in entry.dispatch:
            kernel = d.kernel_name
            for k in d.keys:
                out[k] = kernel
    elif not entry.structured and entry.structured_delegate is None:
        out["CompositeImplicitAutograd"] = entry.name + ("_out" if entry.is_out else "")
    if entry.ufunc_inner_loop:
        for k in ("CUDA", "CPU"):
            out[k] = f"ufunc_{entry.name}_{k}"
    return out


# -------------------------------------------------------------- public API
def read_native_yaml(data: bytes, path: str) -> NativeYaml:
    """Scan native_functions.yaml bytes; ``path`` is the tree-relative posix path."""
    # ~20k long-lived objects and no cycles: the cyclic GC would only re-walk them.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _Scanner(data, path).run()
    finally:
        if was_enabled:
            gc.enable()


def read_native_yaml_file(file: Path, rel: str) -> NativeYaml:
    try:
        data = file.read_bytes()
    except OSError as exc:
        return NativeYaml(rel, (), (ParseError(rel, 1, 1, f"cannot read file: {exc}"),))
    return read_native_yaml(data, rel)
