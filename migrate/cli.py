"""Command line: mps-migrate SUBCOMMAND ...

Each subcommand is a module ``migrate/commands/<name>_cmd.py`` exposing
``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``; the
list below fixes their order in ``--help``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys

from migrate import __version__
from migrate.errors import (
    DEBUG_ENV,
    EXIT_ERROR,
    EXIT_INTERNAL,
    RulesFailed,
    UsageError,
    internal_error,
    missing_extra,
)

COMMANDS = ("lint", "fix", "explain", "rule", "port", "verify", "compile", "status", "bench", "cache", "lintrunner")


def _load(name: str):
    try:
        return importlib.import_module(f"migrate.commands.{name}_cmd")
    except ModuleNotFoundError as exc:
        if exc.name == f"migrate.commands.{name}_cmd":
            return None
        raise


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``only``, just that subcommand's module is imported (startup time)."""
    p = argparse.ArgumentParser(
        prog="mps-migrate", description="Move PyTorch MPS operators from MPSGraph to native Metal."
    )
    p.add_argument("--version", action="version", version=f"mps-migrate {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        if only is not None and name != only:
            sub.add_parser(name)
            continue
        mod = _load(name)
        if mod is None:
            continue
        sp = sub.add_parser(name, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(sp)
        sp.set_defaults(_run=mod.run)
    return p


def main(argv: list[str] | None = None) -> int:
    code = _main(argv)
    if argv is None:  # the process's own command line: nothing runs after this call but the exit
        _leave(code)
    return code


def _leave(code: int) -> None:
    """Exit now, skipping the interpreter's teardown, which frees every object one by one (about 40 ms after
    a whole-tree lint): only once the output is flushed and nothing waits for the exit (no atexit hook,
    no other thread)."""
    import atexit

    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: the process was started with that descriptor closed
                stream.flush()
    except (OSError, ValueError):  # a closed pipe or stream: the ordinary exit handles it as it always did
        return
    threading = sys.modules.get("threading")
    if getattr(atexit, "_ncallbacks", lambda: 1)() or (threading is not None and threading.active_count() > 1):
        return
    os._exit(code)


def _main(argv: list[str] | None) -> int:
    # A short-lived process building ~100k model objects: the cyclic GC only costs time.
    gc.disable()
    argv = sys.argv[1:] if argv is None else argv
    first = next((a for a in argv if not a.startswith("-")), None)
    args = build_parser(first if first in COMMANDS else None).parse_args(argv)
    try:
        return args._run(args)
    except UsageError as exc:
        print(f"mps-migrate: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except ModuleNotFoundError as exc:  # an optional dependency (torch, ziglang, ...) of this command
        message = missing_extra(exc, args.command)
        if message is None:
            raise
        print(f"mps-migrate: error: {message}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("mps-migrate: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_ERROR
    except Exception as exc:  # a bug: one line, never a traceback (unless asked for)
        if os.environ.get(DEBUG_ENV):
            raise
        for line in exc.lines() if isinstance(exc, RulesFailed) else [internal_error(exc)]:
            print(f"mps-migrate: {line}", file=sys.stderr)
        return EXIT_INTERNAL
