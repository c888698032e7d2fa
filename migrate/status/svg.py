"""Inline SVG charts for the HTML status page (no scripts, no external assets)."""

from __future__ import annotations

from collections import Counter
from html import escape

from migrate.status.counting import KINDS

COLORS = {
    "metal-shared": "#2e7d32",
    "metal-mps": "#81c784",
    "mpsgraph": "#e65100",
    "delegating": "#90a4ae",
    "composite": "#cfd8dc",
    "undefined": "#c62828",
    "none": "#eceff1",
}
ROUTED = [k for k in KINDS if k not in ("composite", "none")]


def stacked_bars(chart_id: str, rows: dict[str, Counter], kinds: list[str], width: int = 760) -> str:
    """One horizontal bar per row, one segment per kind; bars share a scale."""
    label_w, row_h, gap, right = 150, 18, 6, 50
    rows = {name: c for name, c in rows.items() if sum(c.get(k, 0) for k in kinds)}
    top = max((sum(c.get(k, 0) for k in kinds) for c in rows.values()), default=1)
    scale = (width - label_w - right) / top
    shown = [k for k in kinds if any(c.get(k, 0) for c in rows.values())]
    per_row = 3
    col_w = (width - label_w) // per_row
    legend_h = 20 * ((len(shown) + per_row - 1) // per_row)
    height = legend_h + len(rows) * (row_h + gap) + gap
    parts = [
        f'<svg id="{chart_id}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" font-family="sans-serif" font-size="12">'
    ]
    for i, k in enumerate(shown):  # legend, ``per_row`` kinds a line
        x, ly = label_w + col_w * (i % per_row), 4 + 20 * (i // per_row)
        parts.append(
            f'<rect x="{x}" y="{ly}" width="12" height="12" fill="{COLORS[k]}" stroke="#999" stroke-width="0.5"/>'
            f'<text x="{x + 16}" y="{ly + 10}">{escape(KINDS[k])}</text>'
        )
    y = legend_h + gap
    for name, c in rows.items():
        parts.append(f'<text x="{label_w - 6}" y="{y + row_h - 5}" text-anchor="end">{escape(name)}</text>')
        x = float(label_w)
        for k in kinds:
            n = c.get(k, 0)
            if not n:
                continue
            w = n * scale
            parts.append(
                f'<rect class="seg" data-row="{escape(name)}" data-kind="{k}" data-n="{n}" x="{x:.1f}" '
                f'y="{y}" width="{max(w, 1):.1f}" height="{row_h}" fill="{COLORS[k]}">'
                f"<title>{escape(name)}: {n} {escape(KINDS[k])}</title></rect>"
            )
            x += w
        total = sum(c.get(k, 0) for k in kinds)
        parts.append(f'<text x="{x + 4:.1f}" y="{y + row_h - 5}" fill="#444">{total}</text>')
        y += row_h + gap
    parts.append("</svg>")
    return "".join(parts)
