"""Report-ready output without Qt: deterministic SVG charts and the self-contained HTML
report (``gpumodeler report``). Imports core and db, never the GUI."""
