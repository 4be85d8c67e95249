"""The system drawing's links (canvas and report): straight when nothing is in the way,
around the boxes otherwise, pairs side by side, labels on no box and no other label."""
from hypothesis import given, settings, strategies as st

from gpumodeler.core.system_routes import (BOX_MARGIN, PARALLEL_GAP, inflate, overlap_area,
                                           route_links, segment_hits_rect)

W, H = 236.0, 74.0
RING = {"gpu1": (-180.0, 0.0, W, H), "gpu2": (180.0, 0.0, W, H), "gpu3": (540.0, 0.0, W, H),
        "gpu4": (900.0, 0.0, W, H), "host1": (0.0, 260.0, W, H)}
RING_LINKS = [("pcie1", "host1", "gpu1"), ("pcie2", "host1", "gpu2"), ("pcie3", "host1", "gpu3"),
              ("pcie4", "host1", "gpu4"), ("nvlink1", "gpu1", "gpu2"), ("nvlink2", "gpu2", "gpu3"),
              ("nvlink3", "gpu3", "gpu4"), ("nvlink4", "gpu4", "gpu1")]
SIZES = {lid: (92.0, 32.0) for lid, _a, _b in RING_LINKS}


def _crosses(points, box) -> bool:
    return any(segment_hits_rect(a, b, box) for a, b in zip(points, points[1:]))


def test_segment_hits_rect():
    box = (0.0, 0.0, 10.0, 10.0)
    assert segment_hits_rect((-5, 5), (15, 5), box)
    assert segment_hits_rect((5, 5), (6, 6), box)            # inside
    assert not segment_hits_rect((-5, -1), (15, -1), box)
    assert not segment_hits_rect((8, 14), (14, 8), box)       # passes the corner


def test_the_ring_closes_around_the_gpus_between_its_ends():
    routes = route_links(RING, RING_LINKS, SIZES)
    closing = routes["nvlink4"].points
    assert len(closing) == 4                                  # out, along a channel, in
    for middle in ("gpu2", "gpu3"):
        assert not _crosses(closing, inflate(RING[middle], BOX_MARGIN - 1))
    assert closing[1][1] < 0                                  # over the row: the shorter way
    for lid in ("nvlink1", "nvlink2", "nvlink3", "pcie1"):
        assert len(routes[lid].points) == 2                   # nothing in their way: straight


def test_no_route_crosses_a_box_it_does_not_join():
    routes = route_links(RING, RING_LINKS, SIZES)
    for lid, a, b in RING_LINKS:
        for k, box in RING.items():
            if k not in (a, b):
                assert not _crosses(routes[lid].points, box), (lid, k)


def test_labels_cover_no_box_and_no_other_label():
    routes = route_links(RING, RING_LINKS, SIZES)
    labels = [r.label for r in routes.values()]
    for label in labels:
        assert all(overlap_area(label, box) == 0 for box in RING.values())
    for i, a in enumerate(labels):
        assert all(overlap_area(a, b) == 0 for b in labels[i + 1:])


def test_links_of_one_pair_run_side_by_side():
    boxes = {"a": (0.0, 0.0, W, H), "b": (500.0, 0.0, W, H)}
    routes = route_links(boxes, [("l1", "a", "b"), ("l2", "b", "a")], {"l1": (80, 30), "l2": (80, 30)})
    (p1, _), (q1, _) = routes["l1"].points, routes["l2"].points
    assert abs(p1[1] - q1[1]) == PARALLEL_GAP
    assert overlap_area(routes["l1"].label, routes["l2"].label) == 0


def test_two_detours_on_one_side_take_different_channels():
    row = {f"g{i}": (i * 350.0, 0.0, W, H) for i in range(4)}
    links = [("far", "g0", "g3"), ("near", "g0", "g2")]
    routes = route_links(row, links, {"far": (80, 30), "near": (80, 30)})
    channels = {lid: routes[lid].points[1][1] for lid in ("far", "near")}
    assert len(routes["far"].points) == len(routes["near"].points) == 4
    assert channels["far"] != channels["near"]


box = st.tuples(st.integers(0, 6), st.integers(0, 4)).map(lambda c: (c[0] * 320.0, c[1] * 170.0, W, H))


@settings(max_examples=60, deadline=None)
@given(st.lists(box, min_size=2, max_size=8, unique=True), st.data())
def test_random_grids_labels_never_overlap_a_box_or_each_other_when_there_is_room(cells, data):
    boxes = {f"d{i}": r for i, r in enumerate(cells)}
    ids = list(boxes)
    pairs = data.draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids))
                               .filter(lambda p: p[0] != p[1]), max_size=8))
    links = [(f"l{i}", a, b) for i, (a, b) in enumerate(pairs)]
    routes = route_links(boxes, links, {lid: (90.0, 30.0) for lid, _a, _b in links})
    assert set(routes) == {lid for lid, _a, _b in links}
    labels = [r.label for r in routes.values()]
    for label in labels:
        assert all(overlap_area(label, b) == 0 for b in boxes.values())
    for i, a in enumerate(labels):
        assert all(overlap_area(a, b) == 0 for b in labels[i + 1:])


def test_a_column_closes_beside_its_middle_boxes():
    column = {f"g{i}": (0.0, i * 150.0, W, H) for i in range(3)}
    routes = route_links(column, [("ring", "g0", "g2")], {"ring": (80.0, 30.0)})
    points = routes["ring"].points
    assert len(points) == 4 and not _crosses(points, column["g1"])
    assert points[1][0] < 0 or points[1][0] > W            # to the left or right of the column
    assert points[1][1] == column["g0"][1] + H / 2 and points[2][1] == column["g2"][1] + H / 2
