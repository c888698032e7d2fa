"""mps-migrate status."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from migrate.errors import UsageError

HELP = "summarise the migration: overload routes by kind, category and host file; MPSGraph families left"
FORMATS = ("text", "markdown", "html", "json")


def add_arguments(p) -> None:
    p.add_argument("--root", default=".", help="the PyTorch tree (default: the one holding the current folder)")
    p.add_argument("--format", default="text", choices=FORMATS)
    p.add_argument(
        "--compare",
        metavar="OTHER_ROOT",
        help="baseline tree (e.g. an older release): report progress from it to --root",
    )
    p.add_argument(
        "--graph-cache",
        action="store_true",
        help="list every graph-cache site (LookUpOrCreateCachedGraph, ...) with the overloads reaching it",
    )
    p.add_argument("-o", "--output", type=Path, help="write the report to this file")


def status_of(root: str):
    from migrate.index import Index
    from migrate.status import compute_status
    from migrate.tree import find_root, load_tree

    return compute_status(Index(load_tree(find_root(Path(root)))))


def _graph_cache(args) -> str:
    if args.format == "html":
        raise UsageError("--graph-cache writes text, markdown or json, not html")
    from migrate.index import Index
    from migrate.status import graph_cache
    from migrate.tree import find_root, load_tree

    def sites(root):
        return graph_cache.inventory(Index(load_tree(find_root(Path(root)))))

    after = sites(args.root)
    if args.compare:
        before = sites(args.compare)
        if args.format == "json":
            return (
                json.dumps({"before": graph_cache.to_json(before), "after": graph_cache.to_json(after)}, indent=2)
                + "\n"
            )
        return graph_cache.render_change(before, after)
    if args.format == "json":
        return json.dumps(graph_cache.to_json(after), indent=2) + "\n"
    return graph_cache.render(after, args.format)


def run(args) -> int:  # imports inside: building the CLI parser should not pay for them
    from migrate.status import compare

    after = None if args.graph_cache else status_of(args.root)
    if args.graph_cache:
        text = _graph_cache(args)
    elif args.compare:
        progress = compare(status_of(args.compare), after)
        text = _render_progress(progress, args.format)
    else:
        text = _render(after, args.format)
    if args.output:
        from migrate.apply import atomic_write

        atomic_write(args.output, text.encode("utf-8"))
        print(
            f"mps-migrate: wrote the {args.format} {'progress' if args.compare else 'status'} to {args.output}",
            file=sys.stderr,
        )
    else:
        sys.stdout.write(text)
    return 0


def _render(s, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(s.to_json(), indent=2) + "\n"
    if fmt == "markdown":
        from migrate.status.markdown import render_markdown

        return render_markdown(s)
    if fmt == "html":
        from migrate.status.html import render_html

        return render_html(s)
    from migrate.status.text import render_text

    return render_text(s)


def _render_progress(p, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(p.to_json(), indent=2) + "\n"
    if fmt == "markdown":
        from migrate.status.markdown import render_progress_markdown

        return render_progress_markdown(p)
    if fmt == "html":
        from migrate.status.html import render_progress_html

        return render_progress_html(p)
    from migrate.status.text import render_progress_text

    return render_progress_text(p)
