"""The cache lines a warp access touches are rounded up: a line the warp touches in part is
still a line it reads (and one more reissue). Hand-computed cases where the exact quotient
is not a whole number, so rounding down would give one line fewer."""
import pytest

from gpumodeler.core.kernel.graph import KernelGraph
from gpumodeler.core.kernel.graph_items import Instruction
from gpumodeler.core.kernel.warp_counts import count, lines_touched


@pytest.mark.parametrize("width, stride, lines", [
    # 2-byte elements at stride 3: thread i reads bytes 6i..6i+1, the last thread bytes
    # 186..187, so the warp spans bytes 0..187: lines 0 and 1 (1.5 lines exactly)
    (2, 3.0, 2),
    # 1-byte elements, stride 1: bytes 0..31, a quarter of line 0 (0.25 lines exactly)
    (1, 1.0, 1),
    # 4-byte elements at stride 1.5 (192 bytes): lines 0 and 1
    (4, 1.5, 2),
    # whole numbers stay as they are: 4 bytes at stride 2 = 256 bytes = 2 lines
    (4, 2.0, 2),
])
def test_partly_touched_line_counts_whole(width, stride, lines):
    assert lines_touched(width, stride, "strided") == lines


def test_partly_touched_line_is_a_reissue_in_the_counts():
    """One global load of 2-byte elements at stride 3 touches 2 lines: issued twice, one
    reissue."""
    g = KernelGraph(name="half stride 3")
    g.add_instruction(Instruction.make("n1", "LDG", width_bytes=2, stride=3.0))
    counts = count(g).evaluate()
    assert counts["reissues"] == 1
    assert counts["issued_instructions"] == 2
