"""The user manual (F1): tasks, not flags; its screenshots are rendered here from the bundled
examples at 1280×720 (scaled down) into docs/manual/img/, so they show the application as it
is, and the test fails when one the manual shows was missing."""
import re
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QTextDocument

from gpumodeler.ui.help import MANUAL, MANUAL_DIR, ManualDialog, manual_markdown
from gpumodeler.ui.screenshot import settle

from manual_shots import IMG, SCREENS, SCREENS_PAGE, keep, screen_name, small, stable_grab

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "resources" / "examples"
SIZE = (1280, 720)
SCALE = 0.7      # 896 × 504: small files, still readable in the help window

#: screenshot -> (example, tab index, what to select first)
SHOTS = {
    "system.png": ("four-h100-nvlink", 0, None),
    "link.png": ("saxpy2-gtx970", 0, "link"),
    "kernel.png": ("saxpy2-gtx970", 1, None),
    "launch.png": ("saxpy2-gtx970", 2, None),
    "application.png": ("four-h100-nvlink", 3, None),
}
TASKS = ("Build a system", "Import a kernel", "Calibrate", "Sweep", "Export a figure",
         "Build an application", "Share devices")

pytestmark = pytest.mark.usefixtures("private_settings")


def referenced_images(text: str) -> list[str]:
    return re.findall(r"!\[[^\]]*\]\(img/([^)]+)\)", text)


def test_the_manual_is_about_tasks_not_flags():
    text = manual_markdown()
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    for task in TASKS:
        assert task in headings, task
    assert not re.search(r"(?<![\w-])--[a-z]", text), "a command-line flag in the user manual"
    assert not re.search(r"\bgpumodeler (predict|devices|sweep|calibrate|report|timeline|graph)\s", text), \
        "a command line in the user manual"


def test_every_screenshot_the_manual_shows_is_rendered_here_and_committed():
    everything = referenced_images(MANUAL.read_text(encoding="utf-8"))
    reports = [name for name in everything if name.startswith("report/")]
    shown = [name for name in everything if name not in reports]
    assert reports, "the manual's Report section shows the report (tests/ui/test_report_shots.py)"
    assert all((IMG / name).is_file() for name in reports), reports
    assert sorted(shown) == sorted(SHOTS), "the manual and SHOTS list the same screenshots"
    missing = [name for name in shown if not (IMG / name).is_file()]
    assert not missing, f"screenshots missing from docs/manual/img: {missing} (run tests/ui/test_manual.py)"
    stale = sorted(p.name for p in IMG.glob("*.png") if p.name not in shown)
    assert not stale, f"screenshots no page shows: {stale}"


def test_the_screens_page_shows_every_tab_of_every_example_at_both_sizes():
    """docs/manual/screens.md: the pictures tests/ui/test_no_overlaps.py renders and checks."""
    from gpumodeler.ui.main_window import example_projects
    from gpumodeler.ui.menus import TAB_NAMES
    expected = sorted(screen_name(e.stem, size, tab) for e in example_projects()
                      for size in ((1280, 720), (1920, 1080)) for tab in TAB_NAMES)
    shown = sorted(re.findall(r"\]\(img/screens/([^)]+)\)", SCREENS_PAGE.read_text(encoding="utf-8")))
    assert shown == expected
    missing = [name for name in expected if not (SCREENS / name).is_file()]
    assert not missing, f"missing from docs/manual/img/screens (run tests/ui/test_no_overlaps.py): {missing}"
    assert sorted(p.name for p in SCREENS.glob("*.png")) == expected


def _render(example_at_size, example: str, tab: int, select) -> QImage:
    win = example_at_size(EXAMPLES / f"{example}.gpm", SIZE)
    win.tabs.setCurrentIndex(tab)
    settle(300)
    if select == "link":
        win.system_editor.scene.select(connection_ids=[next(iter(win.document.project.connections))])
        settle(150)
    win.statusBar().clearMessage()   # the "Opened <path>" message names a path of this machine
    image = stable_grab(win)
    win.close()
    return small(image, round(SIZE[0] * SCALE))


def test_screenshots_are_rendered_from_the_examples(example_at_size):
    IMG.mkdir(parents=True, exist_ok=True)
    missing = [name for name in SHOTS if not (IMG / name).is_file()]
    for name, (example, tab, select) in SHOTS.items():
        image = _render(example_at_size, example, tab, select)
        assert (image.width(), image.height()) == (round(SIZE[0] * SCALE), round(SIZE[1] * SCALE))
        path = IMG / name
        keep(image, path)          # only a changed picture is written again
        assert path.stat().st_size < 80_000, f"{name} is too big for the manual"
    assert not missing, f"{missing} were missing: rendered now into docs/manual/img, commit them"


def test_f1_shows_the_manual_with_its_screenshots(qtbot):
    dialog = ManualDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    text = dialog.browser.toPlainText()
    assert "Build a system" in text and "Share devices" in text
    for name in SHOTS:
        image = dialog.browser.document().resource(QTextDocument.ResourceType.ImageResource,
                                                   QUrl(f"img/{name}"))
        assert image is not None and not image.isNull(), name
    assert Path(MANUAL_DIR / "img").is_dir()


def test_the_contents_links_lead_to_their_sections(qtbot):
    from gpumodeler.ui.help import heading_anchor
    dialog = ManualDialog()
    qtbot.addWidget(dialog)
    dialog.resize(700, 400)
    dialog.show()
    qtbot.waitExposed(dialog)
    anchors = re.findall(r"\]\(#([^)]+)\)", manual_markdown())
    headings = [heading_anchor(h) for h in re.findall(r"^#+ (.+)$", manual_markdown(), flags=re.M)]
    assert anchors and set(anchors) <= set(headings)
    bar = dialog.browser.verticalScrollBar()
    assert bar.value() == 0
    dialog.follow(QUrl("#share-devices"))
    assert bar.value() > 0
    assert not dialog.go_to("no-such-section")
    assert heading_anchor("Build a system") == "build-a-system"
