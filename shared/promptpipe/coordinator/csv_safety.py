"""CSV cells a spreadsheet would not run (docs/export.md, "Safe to open").

Excel, LibreOffice and Google Sheets read a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a
formula (and a leading tab or carriage return is dropped before that check), so a participant who
writes ``=HYPERLINK("http://…")`` would put a live link, or worse, in the coordinator's spreadsheet.
Such a text cell is written with a ``'`` in front, which spreadsheets show as text and do not
display; numbers we write (counts, rates) are not text and are left alone.
"""

from __future__ import annotations

from collections.abc import Mapping

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> object:
    """``value`` as a spreadsheet reads it as text: text starting like a formula gets a ``'``."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def safe_row(row: Mapping[str, object]) -> dict[str, object]:
    return {column: safe_cell(value) for column, value in row.items()}
