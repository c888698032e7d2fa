"""A small, strict unified-diff applier (in memory).

Every hunk must match exactly at the line its header names: no fuzz, no
offset search.  A mismatch raises ``PatchError`` naming the file and line.
"""

from __future__ import annotations

import re
from pathlib import Path
from dataclasses import dataclass, field

from migrate.errors import UsageError

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(UsageError):
    """A patch that cannot be applied; ``path``/``line`` name where."""


@dataclass
class FilePatch:
    old: str | None  # None: file created
    new: str | None  # None: file deleted
    hunks: list[tuple[int, int, int, int, list[str], int]] = field(default_factory=list)  # ..., lines, patch line

    @property
    def path(self) -> str:
        return self.new if self.new is not None else self.old  # type: ignore[return-value]


def _strip(name: str) -> str | None:
    name = name.split("\t", 1)[0].strip()
    if name == "/dev/null":
        return None
    return name[2:] if name[:2] in ("a/", "b/") else name


def parse_patch(text: str, source: str = "<patch>") -> list[FilePatch]:
    lines = text.splitlines()
    out: list[FilePatch] = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            fp = FilePatch(_strip(ln[4:]), _strip(lines[i + 1][4:]))
            if fp.old is None and fp.new is None:
                raise PatchError("both sides are /dev/null", source, i + 1)
            out.append(fp)
            i += 2
            continue
        m = _HUNK.match(ln)
        if m:
            if not out:
                raise PatchError("hunk before any '---'/'+++' file header", source, i + 1)
            os_, oc, ns, nc = int(m[1]), int(m[2] or 1), int(m[3]), int(m[4] or 1)
            body, j, seen_old, seen_new = [], i + 1, 0, 0
            while j < len(lines) and (seen_old < oc or seen_new < nc):
                b = lines[j]
                if b.startswith("\\"):
                    j += 1
                    continue
                tag = b[:1] if b else " "
                if tag not in " +-":
                    break
                seen_old += tag in " -"
                seen_new += tag in " +"
                body.append(b if b else " ")
                j += 1
            if (seen_old, seen_new) != (oc, nc):
                raise PatchError(
                    f"malformed hunk for {out[-1].path}: header says -{oc} +{nc} lines, "
                    f"body has -{seen_old} +{seen_new}",
                    source,
                    i + 1,
                )
            out[-1].hunks.append((os_, oc, ns, nc, body, i + 1))
            i = j
            continue
        i += 1
    if not out:
        raise PatchError("no file changes found (expected a unified diff)", source)
    return out


def apply_file_patch(fp: FilePatch, original: str | None, source: str = "<patch>") -> str | None:
    """The new text of one file (None: deleted)."""
    if fp.old is None:
        if original is not None:
            raise PatchError("patch creates a file that already exists", fp.path)
        old_lines: list[str] = []
    else:
        if original is None:
            raise PatchError("file to patch does not exist", fp.old)
        old_lines = original.splitlines(keepends=True)
    out: list[str] = []
    pos = 0  # 0-based index into old_lines
    for os_, oc, _ns, _nc, body, pline in fp.hunks:
        start = os_ - 1 if oc else os_  # "-N,0" inserts after line N
        if start < pos:
            raise PatchError(f"hunk at patch line {pline} overlaps the previous hunk", fp.path, os_)
        out.extend(old_lines[pos:start])
        k = start
        for b in body:
            tag, text = b[0], b[1:]
            if tag in " -":
                have = old_lines[k] if k < len(old_lines) else None
                if have is None or have.rstrip("\r\n") != text:
                    shown = "end of file" if have is None else repr(have.rstrip("\r\n"))
                    raise PatchError(
                        f"hunk at patch line {pline} does not match: expected {text!r}, found {shown}", fp.path, k + 1
                    )
                if tag == " ":
                    out.append(have)
                k += 1
            else:
                eol = "\r\n" if old_lines and old_lines[0].endswith("\r\n") else "\n"
                out.append(text + eol)
        pos = k
    out.extend(old_lines[pos:])
    if fp.new is None:
        return None
    return "".join(out)


def apply_patch(text: str, read, source: str = "<patch>") -> dict[str, str | None]:
    """Apply a unified diff; ``read(path) -> str | None`` gives current contents.

    Returns path -> new text (None for a deleted file).  Nothing is written.
    """
    result: dict[str, str | None] = {}
    for fp in parse_patch(text, source):
        key = fp.old if fp.old is not None else fp.new
        current = result[key] if key in result else read(key)
        new = apply_file_patch(fp, current, source)
        if fp.old is not None and fp.new is not None and fp.old != fp.new:
            result[fp.old] = None  # rename
        result[fp.path] = new
    return result


def read_patch(root: Path, patch_text: str, source: str) -> dict[str, bytes]:
    def read(path: str) -> str | None:
        f = root / path
        return f.read_text(encoding="utf-8") if f.is_file() else None

    changed = apply_patch(patch_text, read, source)
    deleted = [p for p, t in changed.items() if t is None]
    if deleted:
        raise UsageError(f"patch deletes {', '.join(deleted)}: verify needs the kernel files", source)
    return {p: t.encode("utf-8") for p, t in changed.items() if t is not None}
