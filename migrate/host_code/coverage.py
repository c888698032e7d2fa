"""The shim's coverage of the trees' Objective-C sends: every selector the host files send (``[receiver sel:...]``,
bracket syntax; property dot syntax reads like C++ and is not counted), with how the shim answers it:

- ``runs``: a method of the shim runtime (``kernels/host_shim/runtime``) implements it;
- ``emulated``: an MPSGraph selector the emulation answers by rules/mpsgraph.yaml (``graph_table.emulated``);
- ``raises``: only declared (MPSGraph selectors the emulation lacks, MPS kernels): the call raises, naming it;
- ``Foundation``: GNUstep's Foundation implements it;
- ``missing``: nobody declares it (a host file sending it does not compile).

``python -m migrate.host_code.coverage [NAME=]TREE...`` prints the table (docs/host-shim-coverage.md is its output for the
shipped trees; a test keeps the two in sync).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

from migrate.source.tokens import scrub

from .graph_table import emulated
from .toolchain import shim_dir

GNUSTEP_FOUNDATION = Path("/usr/include/GNUstep/Foundation")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_METHOD = re.compile(r"^\s*[-+]\s*\(([^;{]*)[;{]", re.M)
_PROPERTY = re.compile(r"@property\s*(\(([^)]*)\))?[^;]*?(\w+)\s*(?:API_\w+\([^)]*\)\s*)*;")
_KEYWORD = re.compile(r"(\w+)\s*:")


def _code(text: str) -> str:
    """``text`` with comments and literal contents blanked (the source layer's scrub; offsets kept)."""
    return scrub(text.encode("utf-8", "surrogateescape"))[0].decode("utf-8", "surrogateescape")


def _top_level(body: str) -> str:
    """``body`` with each nested bracket, parenthesis or brace group as one ``_`` (its contents are another
    expression)."""
    out, depth = [], 0
    for ch in body:
        if ch in "([{":
            depth += 1
            out.append("_" if depth == 1 else " ")  # one token for the group (a receiver may be a nested send)
        elif ch in ")]}":
            depth = max(0, depth - 1)
            out.append(" ")
        else:
            out.append(ch if depth == 0 else " ")
    return "".join(out)


_OPERATOR_END = re.compile(r"(?:[=,&|+*/%<>!?:~^-]|\b(?:new|delete|return|case))\s*$")


def _blank_ternaries(top: str) -> str:
    """``top`` with each ``?`` and the ``:`` answering it blanked (an argument ``c ? a : b`` is no keyword)."""
    chars, pending = list(top), 0
    for i, ch in enumerate(chars):
        if ch == "?":
            pending += 1
            chars[i] = " "
        elif ch == ":" and pending and top[i + 1 : i + 2] != ":" and top[i - 1 : i] != ":":
            pending -= 1
            chars[i] = " "
    return "".join(chars)


def _selector(top: str) -> str | None:
    """The selector of a send's top level (``receiver sel`` or ``receiver a:x b:y``), else None (a subscript, a
    lambda capture, a structured binding)."""
    top = _blank_ternaries(top)
    keywords = [m for m in _KEYWORD.finditer(top) if not top[m.end() :].startswith(":")]  # not a scope (a::b)
    if keywords:
        receiver = top[: keywords[0].start()]
        if not receiver.strip() or not receiver[-1].isspace() or _OPERATOR_END.search(receiver):
            return None
        return "".join(m.group(1) + ":" for m in keywords)
    words = top.split()
    if len(words) < 2 or not _IDENT.fullmatch(words[-1]) or _OPERATOR_END.search(" ".join(words[:-1])):
        return None
    return words[-1]


def _first_branches(text: str) -> str:
    """``text`` with preprocessor lines blanked, and the ``#else``/``#elif`` branches too (a send split by
    ``#if`` would otherwise read both branches' keywords)."""
    out, skipping = [], []
    for line in text.split("\n"):
        directive = line.lstrip()
        if directive.startswith("#"):
            word = directive[1:].lstrip().split(" ", 1)[0]
            if word.startswith("if"):
                skipping.append(False)
            elif word in ("else", "elif") and skipping:
                skipping[-1] = True
            elif word == "endif" and skipping:
                skipping.pop()
            out.append("")
        else:
            out.append("" if any(skipping) else line)
    return "\n".join(out)


def sends(text: str) -> Counter:
    """The selectors sent in one Objective-C++ file, with counts (macro bodies pasting a selector are left out)."""
    text = _first_branches(_code(text))
    found: Counter = Counter()
    stack: list[int] = []
    for i, ch in enumerate(text):
        if ch == "[":
            stack.append(i)
        elif ch == "]" and stack:
            start = stack.pop()
            inner = text[start - 1 : start] == "[" and text[i + 1 : i + 2] == "]"
            if inner or (text[start + 1 : start + 2] == "[" and text[i - 1 : i] == "]"):  # [[attribute]]
                continue
            top = _top_level(text[start + 1 : i])
            sel = None if "##" in top else _selector(top)
            if sel:
                found[sel] += 1
    return found


def _declared_selectors(text: str) -> set[str]:
    text = _code(text)
    out = set()
    for m in _METHOD.finditer(text):
        decl = m.group(0)
        decl = decl[decl.index("(") :]
        depth, i = 0, 0
        for i, ch in enumerate(decl):  # skip the return type
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                break
        rest = _top_level(decl[i + 1 :])
        keywords = _KEYWORD.findall(rest)
        first = _IDENT.search(rest)
        if keywords:
            out.add("".join(k + ":" for k in keywords))
        elif first:
            out.add(first.group(0))
    for m in _PROPERTY.finditer(text):
        name = m.group(3)
        out.add(name)
        if "readonly" not in (m.group(2) or ""):
            out.add(f"set{name[0].upper()}{name[1:]}:")
    return out


def _selectors_in(folder: Path, suffixes: tuple[str, ...]) -> set[str]:
    out: set[str] = set()
    for path in sorted(folder.rglob("*")):
        if path.suffix in suffixes and path.is_file():
            out |= _declared_selectors(path.read_text(encoding="utf-8", errors="replace"))
    return out


def classify(selectors, foundation: Path = GNUSTEP_FOUNDATION) -> dict[str, str]:
    shim = shim_dir()
    runs = _selectors_in(shim / "runtime", (".mm", ".h", ".m"))
    emulated_selectors = set(emulated())
    declared = _selectors_in(shim / "include", (".h",))
    gnustep = _selectors_in(foundation, (".h",)) if foundation.is_dir() else set()
    out = {}
    for sel in selectors:
        if sel in runs:
            out[sel] = "runs"
        elif sel in emulated_selectors:
            out[sel] = "emulated"
        elif sel in declared:
            out[sel] = "raises"
        elif sel in gnustep:
            out[sel] = "Foundation"
        else:
            out[sel] = "missing"
    return out


def tree_sends(root: Path) -> Counter:
    mps = root / "aten/src/ATen/native/mps"
    total: Counter = Counter()
    for path in sorted([mps / "OperationUtils.mm", *(mps / "operations").glob("*.mm")]):
        if path.is_file():
            total += sends(path.read_text(encoding="utf-8", errors="replace"))
    return total


def table(trees: dict[str, Path]) -> str:
    counts = {name: tree_sends(root) for name, root in trees.items()}
    every = sorted(set().union(*counts.values()), key=lambda s: (-sum(c[s] for c in counts.values()), s))
    kinds = classify(every)
    summary = Counter(kinds.values())
    lines = [
        "# The shim's coverage of the trees' Objective-C sends",
        "",
        "Generated by `python -m migrate.host_code.coverage 2.6.0=TREE 2.7.0a0=TREE` from the host files (`OperationUtils.mm`, "
        "`operations/*.mm`) of the shipped trees; bracket sends only (property dot syntax is not counted). "
        "runs: the shim runtime implements it; emulated: the MPSGraph emulation answers it by rules/mpsgraph.yaml "
        "([mpsgraph-emulation.md](mpsgraph-emulation.md)); raises: declared only (MPSGraph selectors the emulation "
        "lacks, MPS kernels: the call raises, naming it); Foundation: GNUstep's; missing: nobody declares it.",
        "",
        "Selectors: "
        + ", ".join(f"{summary[k]} {k}" for k in ("runs", "emulated", "raises", "Foundation", "missing"))
        + ".",
        "",
        "| selector | " + " | ".join(f"sends in {n}" for n in trees) + " | shim |",
        "|---|" + "---|" * len(trees) + "---|",
    ]
    for sel in every:
        lines.append(f"| `{sel}` | " + " | ".join(str(counts[n][sel]) for n in trees) + f" | {kinds[sel]} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    trees = {}
    for arg in argv:
        name, _, path = arg.rpartition("=")
        trees[name or Path(path).name.removeprefix("pytorch-v")] = Path(path)
    if not trees:
        print("usage: python -m migrate.host_code.coverage [NAME=]TREE...", file=sys.stderr)
        return 2
    sys.stdout.write(table(trees))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
