"""The Gantt chart's text placement, without Qt: names shortened, moved beside their bar or
hidden, never overlapping; lane names thinned when lanes are thin; lanes sized to the view;
notes of several devices merged into one line."""
from hypothesis import given, strategies as st

from gpumodeler.ui.application.fields import merge_device_notes
from gpumodeler.ui.application.gantt_labels import (ELLIPSIS, MIN_LANE_PX, PAD_PX, char_measure,
                                                     display_name, elide, lane_label_step,
                                                     lane_names, lanes_in_view, place_bar_labels)

CHAR = 7.0
MEASURE = char_measure(CHAR)


def test_elide_keeps_whole_names_that_fit_and_shortens_the_others():
    assert elide("scatter", 7 * CHAR, MEASURE) == "scatter"
    short = elide("scatter to gpu2", 8 * CHAR, MEASURE)
    assert short.endswith(ELLIPSIS) and MEASURE(short) <= 8 * CHAR
    assert "scatter to gpu2".startswith(short[:-1])
    assert elide("scatter to gpu2", 2 * CHAR, MEASURE) is None   # fewer than 3 characters left


def test_a_wide_bar_holds_its_name_inside_a_narrow_one_beside_or_not_at_all():
    bars = [(0, 0.0, 400.0, "scatter to gpu1"),   # wide: inside, whole
            (1, 0.0, 60.0, "scatter to gpu2"),    # narrow: shortened inside
            (2, 0.0, 10.0, "sync"),               # too narrow: beside, in the free lane
            (3, 0.0, 10.0, "kernel"),             # too narrow, and the next bar is right there
            (3, 12.0, 20.0, "gather")]            # too narrow, but free space after it
    placed = {p.bar: p for p in place_bar_labels(bars, lane_px=20, text_px=14, view_px=(0, 800),
                                                 measure=MEASURE)}
    assert placed[0].inside and placed[0].text == "scatter to gpu1"
    assert placed[0].x_px == 200.0
    assert placed[1].inside and placed[1].text.endswith(ELLIPSIS)
    assert not placed[2].inside and placed[2].text == "sync" and placed[2].left_px >= 10.0
    assert 3 not in placed                      # no room in or beside its bar
    assert not placed[4].inside and placed[4].left_px >= 20.0


def test_no_names_in_lanes_thinner_than_a_line_of_text():
    assert place_bar_labels([(0, 0, 500, "kernel")], lane_px=10, text_px=14, view_px=(0, 800),
                            measure=MEASURE) == []


def test_only_the_visible_part_of_a_bar_holds_its_name():
    (p,) = place_bar_labels([(0, -1000.0, 300.0, "kernel")], lane_px=20, text_px=14,
                            view_px=(0, 800), measure=MEASURE)
    assert p.inside and p.x_px == 150.0
    assert place_bar_labels([(0, 900.0, 1000.0, "kernel")], lane_px=20, text_px=14,
                            view_px=(0, 800), measure=MEASURE) == []


def test_overlapping_bars_of_a_lane_do_not_get_overlapping_names():
    bars = [(0, 0.0, 300.0, "critical kernel"), (0, 20.0, 280.0, "concurrent kernel")]
    placed = place_bar_labels(bars, lane_px=20, text_px=14, view_px=(0, 800), measure=MEASURE)
    assert [p.bar for p in placed] == [0]      # the first listed wins the contested place


bar = st.tuples(st.integers(0, 5), st.floats(-200, 1200), st.floats(0, 600),
                st.text("abcdefgh ", min_size=0, max_size=25))


@given(st.lists(bar, max_size=60), st.floats(12, 60))
def test_placed_names_never_overlap_nor_leave_their_lane_or_the_view(raw, lane_px):
    bars = [(lane, x, x + w, name) for lane, x, w, name in raw]
    placed = place_bar_labels(bars, lane_px=lane_px, text_px=14, view_px=(0, 1000), measure=MEASURE)
    for p in placed:
        lane, left, right, name = bars[p.bar]
        assert p.lane == lane
        assert MEASURE(p.text) <= p.right_px - p.left_px + 1e-9
        assert 0 <= p.left_px and p.right_px <= 1000
        assert p.text == name or (p.text.endswith(ELLIPSIS) and name.startswith(p.text[:-1].rstrip()))
        if p.inside:
            assert p.left_px >= max(left, 0) + PAD_PX - 1e-9
            assert p.right_px <= min(right, 1000) - PAD_PX + 1e-9
        else:   # beside its bar, on no bar of its lane
            assert p.left_px >= right
            assert not any(bl == lane and bs < p.right_px and be > p.left_px for bl, bs, be, _n in bars)
    for i, a in enumerate(placed):
        for b in placed[i + 1:]:
            if a.lane == b.lane:
                assert a.right_px <= b.left_px or b.right_px <= a.left_px


def test_lane_names_are_thinned_and_shortened_to_the_axis():
    rows = [f"link{i}:host1>gpu{i}" for i in range(8)]
    assert lane_label_step(20, 14) == 1 and lane_label_step(5, 14) == 3
    names = lane_names(rows, lane_px=5, text_px=14, room_px=1000, measure=MEASURE)
    assert [bool(n) for n in names] == [i % 3 == 0 for i in range(8)]
    names = lane_names(rows, lane_px=20, text_px=14, room_px=8 * CHAR, measure=MEASURE)
    assert all(MEASURE(n) <= 8 * CHAR and n.endswith(ELLIPSIS) for n in names)
    assert display_name("link1:host1>gpu1") == "link1 host1→gpu1"
    assert display_name("gpu2/compute") == "gpu2 compute"


def test_lanes_fill_the_view_between_a_readable_and_a_sensible_height():
    assert lanes_in_view(4, 400) == 400 / 44.0          # not 100 px lanes: some space left
    assert lanes_in_view(13, 300) == 13                  # 23 px each: all shown
    shown = lanes_in_view(40, 300)
    assert shown == int(300 / MIN_LANE_PX) and shown < 40   # the rest scroll
    assert 300 / shown >= MIN_LANE_PX


def test_notes_of_several_devices_take_one_line():
    notes = ["gpu1: idle power is unknown", "gpu2: idle power is unknown",
             "gpu1: number of copy engines unknown; taken as 1", "a note about everything: x"]
    assert merge_device_notes(notes) == ["gpu1, gpu2: idle power is unknown",
                                         "gpu1: number of copy engines unknown; taken as 1",
                                         "a note about everything: x"]
