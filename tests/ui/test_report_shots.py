"""The HTML report drawn offscreen (gpumodeler/ui/report_render.py): its inline SVG figures
drawn by QtSvg as images, and the report of every bundled example kept in
docs/manual/img/report/ as the manual's pictures of it (its first screenful at 1280×720 and
its whole summary), written again only when they changed."""
import re

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage

from gpumodeler.db.project_file import load_project
from gpumodeler.report.html import OUTLINE, build_report
from gpumodeler.ui import report_render
from gpumodeler.ui.main_window import example_projects

from manual_shots import REPORT, REPORT_WIDTH, SCREENS_PAGE, keep, report_names, small

pytestmark = pytest.mark.usefixtures("qapp", "private_settings")   # fonts need the application

EXAMPLES = example_projects()
SQUARE = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30">'
          '<rect x="10" y="10" width="20" height="10" fill="#ff0000"/></svg>')


def _colours(image: QImage) -> np.ndarray:
    rgb = image.convertToFormat(QImage.Format.Format_RGB32)
    return np.frombuffer(rgb.constBits(), np.uint32, rgb.sizeInBytes() // 4).copy()


def _report(example, catalog) -> str:
    return build_report(load_project(example), catalog, project_path=str(example),
                        command=f"gpumodeler report {example.name}")


def test_an_inline_svg_figure_is_drawn_at_its_own_size():
    image = report_render.figure_image(SQUARE)
    assert (image.width(), image.height()) == (40, 30)
    assert image.pixelColor(20, 15) == QColor("#ff0000")      # inside the rectangle
    assert image.pixelColor(2, 2) == QColor("white")          # the page around it


def test_each_figure_becomes_an_image_and_the_rest_of_the_html_is_kept():
    html = f"<h2 id='a'>A</h2><p>one</p>{SQUARE}<p>two</p>{SQUARE}<h2 id='b'>B</h2>"
    text, images = report_render.with_figures_as_images(html)
    assert "<svg" not in text and sorted(images) == ["report-figure-1.png", "report-figure-2.png"]
    assert re.sub(r"<img [^>]*>", "", text) == re.sub(r"<svg.*?</svg>", "", html)
    doc = report_render.report_document(html, 400)
    drawn = report_render.render(doc)
    assert drawn.width() == 400
    red = _colours(drawn) == QColor("#ff0000").rgb()
    assert red.sum() == 2 * 20 * 10, "both figures drawn in the page, at their own size"
    assert report_render.anchor_top(doc, "a") < report_render.anchor_top(doc, "b")
    assert report_render.anchor_top(doc, "nowhere") is None
    with pytest.raises(ValueError, match="#b to #a"):
        report_render.section(html, "b", "a", 400)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_the_report_of_each_example_is_pictured_for_the_manual(catalog, example):
    html = _report(example, catalog)
    first = report_render.first_screen(html, (1280, 720))
    assert (first.width(), first.height()) == (1280, 720)
    following = [anchor for anchor, _title, level in OUTLINE if level == 2]
    summary = report_render.section(html, "summary", following[following.index("summary") + 1])
    assert summary.width() == 1280 and 60 < summary.height() < first.height()
    names = report_names(example.stem)
    missing = [name for name in names if not (REPORT / name).is_file()]
    for name, image in zip(names, (first, summary)):
        colours = _colours(image)
        assert np.mean(colours != QColor("white").rgb()) > 0.01, f"{name} is blank"
        assert len(np.unique(colours)) > 8, f"{name} has no text or figure"
        keep(small(image, REPORT_WIDTH), REPORT / name)
        assert (REPORT / name).stat().st_size < 120_000, f"{name} is too big for the manual"
    assert not missing, f"{missing} were missing: rendered now into docs/manual/img/report, commit them"


def test_the_report_pictures_are_shown_and_none_is_stale():
    expected = sorted(name for example in EXAMPLES for name in report_names(example.stem))
    shown = sorted(re.findall(r"\]\(img/report/([^)]+)\)", SCREENS_PAGE.read_text(encoding="utf-8")))
    assert shown == expected
    assert sorted(p.name for p in REPORT.glob("*.png")) == expected
    for name in expected:
        assert not QImage(str(REPORT / name)).isNull(), name
