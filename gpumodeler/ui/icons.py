"""Icons drawn from small SVGs kept in this module, so an installed wheel needs no data files.

``APP_ICON_SVG`` is the application icon; ``resources/icons/gpumodeler.svg`` (used by the
desktop entry and the bundle) holds the same drawing, and a test keeps the two equal.
"""
from __future__ import annotations

from PySide6.QtCore import QByteArray, QRectF, Qt
from PySide6.QtGui import QGuiApplication, QIcon, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

APP_ICON_SVG = """<?xml version="1.0" encoding="UTF-8"?>
<!-- gpumodeler application icon: a GPU die with its pins and a rising prediction curve. Original artwork, MIT like the project. -->
<svg xmlns="http://www.w3.org/2000/svg" width="128" height="128" viewBox="0 0 128 128">
  <defs>
    <linearGradient id="bg" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#2f6f5e"/>
      <stop offset="1" stop-color="#1d4a3f"/>
    </linearGradient>
  </defs>
  <rect x="6" y="6" width="116" height="116" rx="22" fill="url(#bg)"/>
  <g stroke="#cfe8df" stroke-width="5" stroke-linecap="round">
    <line x1="44" y1="20" x2="44" y2="30"/><line x1="64" y1="20" x2="64" y2="30"/><line x1="84" y1="20" x2="84" y2="30"/>
    <line x1="44" y1="98" x2="44" y2="108"/><line x1="64" y1="98" x2="64" y2="108"/><line x1="84" y1="98" x2="84" y2="108"/>
    <line x1="20" y1="44" x2="30" y2="44"/><line x1="20" y1="64" x2="30" y2="64"/><line x1="20" y1="84" x2="30" y2="84"/>
    <line x1="98" y1="44" x2="108" y2="44"/><line x1="98" y1="64" x2="108" y2="64"/><line x1="98" y1="84" x2="108" y2="84"/>
  </g>
  <rect x="30" y="30" width="68" height="68" rx="8" fill="#10211c" stroke="#cfe8df" stroke-width="4"/>
  <polyline points="40,86 52,76 62,79 74,60 88,42" fill="none" stroke="#f2b134" stroke-width="6"
            stroke-linecap="round" stroke-linejoin="round"/>
  <circle cx="88" cy="42" r="5" fill="#f2b134"/>
</svg>
"""

# Kind glyphs for the palette and the canvas items (24×24, one colour each).
_GPU_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24" viewBox="0 0 24 24">
  <rect x="2" y="6" width="20" height="12" rx="2" fill="#2f6f5e"/>
  <circle cx="8.5" cy="12" r="3.2" fill="#cfe8df"/><circle cx="8.5" cy="12" r="1.2" fill="#2f6f5e"/>
  <rect x="13.5" y="9" width="6" height="6" rx="1" fill="#cfe8df"/>
  <rect x="4" y="18" width="10" height="3" fill="#c9a227"/>
</svg>"""
_HOST_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24" viewBox="0 0 24 24">
  <rect x="6" y="2" width="12" height="20" rx="2" fill="#35608f"/>
  <rect x="8.5" y="5" width="7" height="2" rx="1" fill="#d6e4f2"/>
  <rect x="8.5" y="9" width="7" height="2" rx="1" fill="#d6e4f2"/>
  <circle cx="12" cy="17.5" r="1.6" fill="#d6e4f2"/>
</svg>"""
_LINK_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24" viewBox="0 0 24 24">
  <path d="M4 12 H20" stroke="#b8641e" stroke-width="3" stroke-linecap="round"/>
  <circle cx="5" cy="12" r="3.5" fill="#b8641e"/><circle cx="19" cy="12" r="3.5" fill="#b8641e"/>
</svg>"""
_FOLDER_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24" viewBox="0 0 24 24">
  <path d="M2 6 a2 2 0 0 1 2 -2 h5 l2 2 h9 a2 2 0 0 1 2 2 v10 a2 2 0 0 1 -2 2 h-16 a2 2 0 0 1 -2 -2 z" fill="#8a8f98"/>
</svg>"""

_FIT_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24" viewBox="0 0 24 24">
  <g fill="none" stroke="#3c4650" stroke-width="2.2" stroke-linecap="round">
    <path d="M3 8 V3 H8"/><path d="M16 3 H21 V8"/><path d="M21 16 V21 H16"/><path d="M8 21 H3 V16"/>
  </g>
  <rect x="8" y="8" width="8" height="8" rx="1.5" fill="#2f6f5e"/>
</svg>"""

_SVGS = {"app": APP_ICON_SVG, "gpu": _GPU_SVG, "host": _HOST_SVG, "link": _LINK_SVG,
         "group": _FOLDER_SVG, "fit": _FIT_SVG}


def render_svg(svg: str, size: int) -> QPixmap:
    """``svg`` rendered into a transparent ``size``×``size`` pixmap."""
    renderer = QSvgRenderer(QByteArray(svg.encode()))
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    return pixmap


_cache: dict[str, QIcon] = {}


def icon(name: str) -> QIcon:
    """The icon ``name``: "app", "gpu", "host", "link", "group" or "fit". Needs a QGuiApplication;
    icons are cached for the life of that application (pixmaps must not outlive it)."""
    if name not in _cache:
        if not _cache:
            QGuiApplication.instance().destroyed.connect(_cache.clear)
        result = QIcon()
        for size in (16, 24, 32, 48, 64, 128):
            result.addPixmap(render_svg(_SVGS[name], size))
        _cache[name] = result
    return _cache[name]
