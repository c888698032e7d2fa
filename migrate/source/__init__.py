"""The one source layer: a file's bytes, lines and character columns (``SourceFile``), places
(``Span``), the C-family token stream (``tokens``) and the macro expander (``macros``).
Readers and port see source text only through here."""

from migrate.source.span import Span
from migrate.source.file import SourceFile, RawString, source_file

__all__ = ["Span", "SourceFile", "RawString", "source_file"]
