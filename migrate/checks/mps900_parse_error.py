"""MPS900 parse-error: a file of the tree that could not be read or parsed (the readers record it; reported here).

Severity: error. Reads: . Fix safety: none.

## What it does
A file of the tree could not be read or parsed (malformed yaml, non-UTF-8
bytes, unreadable file). The rest of the tree is still linted.

## Why it matters
A finding elsewhere may be missing or wrong while this file cannot be read.
When (part of) the file was not read, the message names the checks that may
be incomplete; findings the unread content could explain (a kernel defined
nowhere, a stub without MPS registration, a missing functor, a dead
function) are not reported.

## Example
aten/src/ATen/native/native_functions.yaml:12:3: MPS900 dispatch line without ':'

## Fix
Fix the file.
"""

from migrate.model import Finding, ParseError, Span
from migrate.rulebook import Rule
from migrate.tree import file_kind

# rule code -> the kinds of files its findings depend on (Rule.reads), every rule's: the registry
# (migrate.checks) fills it, as this rule cannot import the registry that imports it
READS: dict[str, tuple[str, ...]] = {}


def check(ix) -> list[Finding]:
    tree = ix.tree
    return [
        RULE.finding(_error_span(e, tree.sources.get(e.path)), message(e.message + _incomplete_checks(e)))
        for e in tree.errors
    ]


def _error_span(e: ParseError, data: bytes | None) -> Span:
    """One character at the error (byte offsets: its line's start, when the bytes were read)."""
    at = 0
    if data:
        for _ in range(e.line - 1):
            at = data.find(b"\n", at) + 1
            if at == 0:
                at = len(data)
                break
    return Span(e.path, e.line, e.column, e.line, e.column + 1, at, at)


def _incomplete_checks(e: ParseError) -> str:
    """For an error that left (part of) a file unread: the rules whose findings depend on that kind of file."""
    if not e.partial:
        return ""
    kind = file_kind(e.path)
    codes = [code for code, reads in READS.items() if kind in reads]
    return f"; checks that may be incomplete: {', '.join(codes)}" if codes else ""


def message(detail: str) -> str:
    return detail


RULE = Rule.documented(__name__, message, check)
