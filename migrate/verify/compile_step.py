"""Compile the family's kernel file for verify; a file that does not compile blocks its cells.

The compiler's first error (``file:line:col``) is reported once, at the top of the report, with the
cells it blocks: never as a kernel the library "does not register" (a failed compile registers nothing).
An inline template library compiles per parameter list on first use: a later list that fails blocks the
cells from then on (``Runner`` records it here too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from migrate.device import DeviceError, MetalCompileError, get_backend


class CannotRun(Exception):
    """Verification could not run (no toolchain, unsupported op): exit 2."""


@dataclass
class CompileFailure:
    """A kernel file that does not compile: the compiler's first error and the cells it blocks."""

    file: str  # tree-relative path of the file (or the header) the error is in
    line: int  # 0 when the compiler named no line
    column: int
    message: str  # the first error
    detail: str = ""  # the compiler's report (its first errors, with their source lines)
    blocks: list[tuple[str, str]] = field(default_factory=list)  # (dtype, layout) of the cells blocked

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}:{self.column}" if self.line else self.file

    def json(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "detail": self.detail,
            "blocks": [{"dtype": d, "layout": lay} for d, lay in self.blocks],
        }


def failure_of(exc: MetalCompileError, path: str) -> CompileFailure:
    """``exc`` located in the tree: a diagnostic in the compiled file names ``path`` (the tree-relative one)."""
    detail = str(exc)
    diags = list(getattr(exc, "diagnostics", ()))
    if not diags:
        lines = [ln for ln in detail.splitlines()[1:] if ln.strip()]
        return CompileFailure(path, 0, 0, lines[0].strip() if lines else detail.splitlines()[0], detail)
    d = diags[0]
    file = path if d.file == Path(path).name else d.file
    return CompileFailure(file, d.line, d.column, d.message, detail)


def compile_source(source, root: Path, opts):
    """The compiled library of ``source``: raises ``MetalCompileError`` when the file does not compile,
    ``CannotRun`` when it cannot be compiled here at all."""
    from migrate.device import mps_available
    from migrate.verify.template_host import TemplateLibrary

    if opts.backend == "mps" or (opts.backend == "auto" and mps_available()):
        # the runner binds CPU tensors and reads CpuLibrary.kernel_names (known gap)
        raise CannotRun("verify runs kernels on the CPU backend only; the mps backend is not wired in yet")
    try:
        if opts.backend == "cuda":  # the same cases and references, kernels on an NVIDIA GPU (PTX built here)
            be = get_backend("cuda", root=root, compile_timeout=opts.compile_timeout)
        else:
            be = get_backend(
                "cpu",
                root=root,
                checked=opts.checked,
                timeout=opts.timeout,
                memory=opts.memory,
                compile_timeout=opts.compile_timeout,
            )
        if source.template:

            def build(text: str):
                return be.compile_shader(
                    text, source.include_dirs, filename=Path(source.path).stem + ".metal", opt=opts.opt
                )

            lib = TemplateLibrary(build, source.template)
            lib.library(("float", "float"))  # a source that cannot compile at all blocks every cell
            return lib
        return be.compile_shader(source.text, source.include_dirs, filename=Path(source.path).name, opt=opts.opt)
    except MetalCompileError:
        raise
    except DeviceError as exc:
        raise CannotRun(f"cannot compile {source.path}: {exc}") from None
    except ValueError as exc:
        raise CannotRun(str(exc)) from None


def compile_or_block(source, root: Path, opts) -> tuple[object, CompileFailure | None]:
    """(library, None), or (None, the failure) when the file does not compile."""
    try:
        return compile_source(source, root, opts), None
    except MetalCompileError as exc:
        return None, failure_of(exc, source.path)
