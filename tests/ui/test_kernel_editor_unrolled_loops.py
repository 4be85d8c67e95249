"""The kernel editor's loop label says what an imported loop's variable counts: the source
loop's trip count for the loops of one unrolled source loop, trips as compiled where the
listing cannot show it (core.kernel.sass.build)."""
from pathlib import Path

import pytest

from gpumodeler.core.kernel.sass.importer import import_kernel
from gpumodeler.ui.kernel_editor.scene import KernelScene

SASS = Path(__file__).resolve().parents[2] / "resources" / "kernels" / "sass"


@pytest.fixture(autouse=True)
def env(gpumodeler_env):
    """No test reads or writes the user's own databases or settings."""


def titles(qtbot, listing):
    scene = KernelScene()
    scene.set_graph(import_kernel(SASS / listing))
    return {lid: item.title for lid, item in scene.loop_items.items()}


def test_the_loops_of_a_doubly_unrolled_loop_are_labelled_with_the_source_trip_count(qtbot):
    got = titles(qtbot, "unroll_nested.sm_75.sass")
    assert sorted(got) == ["loop1", "loop2", "loop3"]
    for lid, copies in (("loop1", 16), ("loop2", 4), ("loop3", 1)):
        assert f"{copies} source iteration" in got[lid]
        assert "loop1 = the source loop's trip count" in got[lid]
    assert got["loop1"].endswith("× floor(loop1 / 16)")


def test_a_loop_unrolled_without_a_remainder_loop_is_labelled_as_counting_compiled_trips(qtbot):
    got = titles(qtbot, "unroll_inner.sm_75.sass")
    assert "counts trips as compiled" in got["loop2"] and "unrolled 4x" in got["loop2"]
    assert "counts trips as compiled" not in got["loop1"]


def test_a_long_loop_title_shows_its_start_within_the_box(qtbot):
    """The doubly unrolled loop's title (note and iteration expression) is wider than its box:
    the box shows its start, cut with an ellipsis, not its tail running out to the left."""
    from PySide6.QtGui import QFont, QFontMetricsF
    scene = KernelScene()
    scene.set_graph(import_kernel(SASS / "unroll_nested.sm_75.sass"))
    item = scene.loop_items["loop2"]
    font = QFont()
    font.setBold(True)
    shown = item.shown_title(font)
    assert QFontMetricsF(font).horizontalAdvance(item.title) > item.rect.width()
    assert shown.endswith("…") and item.title.startswith(shown[:-1])
    assert QFontMetricsF(font).horizontalAdvance(shown) <= item.rect.width() - 20
