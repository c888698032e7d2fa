"""The strict unified-diff applier of verify --patch."""

from __future__ import annotations

import difflib

import pytest

from migrate.verify.patch import PatchError, apply_patch

OLD = "line one\nline two\nline three\nline four\nline five\n"


def diff(old: str, new: str, path: str = "k.metal") -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}"))


def test_applies_a_difflib_patch():
    new = OLD.replace("line two\n", "line 2\nline 2b\n").replace("line five\n", "")
    out = apply_patch(diff(OLD, new), lambda p: OLD)
    assert out == {"k.metal": new}


def test_refuses_a_hunk_that_does_not_match_naming_file_and_line():
    patch = diff(OLD, OLD.replace("line three", "line 3"))
    with pytest.raises(PatchError) as ei:
        apply_patch(patch, lambda p: OLD.replace("line three", "line THREE"))
    assert ei.value.path == "k.metal" and ei.value.line == 3
    assert "line three" in str(ei.value)


def test_no_fuzz_a_shifted_file_is_refused():
    patch = diff(OLD, OLD.replace("line four", "line 4"))
    with pytest.raises(PatchError):
        apply_patch(patch, lambda p: "extra\n" + OLD)


def test_creates_new_files_and_refuses_missing_ones():
    patch = "--- /dev/null\n+++ b/new.h\n@@ -0,0 +1,2 @@\n+a\n+b\n"
    assert apply_patch(patch, lambda p: None) == {"new.h": "a\nb\n"}
    with pytest.raises(PatchError, match="does not exist"):
        apply_patch(diff(OLD, OLD + "x\n"), lambda p: None)


def test_malformed_hunk_and_empty_patch():
    bad = "--- a/k.metal\n+++ b/k.metal\n@@ -1,3 +1,3 @@\n line one\n-line two\n"
    with pytest.raises(PatchError, match="malformed"):
        apply_patch(bad, lambda p: OLD)
    with pytest.raises(PatchError, match="no file changes"):
        apply_patch("hello\n", lambda p: OLD)
