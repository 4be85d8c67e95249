"""A stride below one element: a warp whose lanes share words (a 16×16 block's warp of two
rows, each on one word) moves its sectors, at least one transaction, not one element per
lane (core.kernel.warp_counts.access_bytes_per_warp, core.kernel.graph_items)."""
import pytest

from gpumodeler.core.errors import GraphError
from gpumodeler.core.kernel.graph_items import Instruction
from gpumodeler.core.kernel.warp_counts import access_bytes_per_warp, access_cost, lines_touched


@pytest.mark.parametrize("width, stride, segment, expected", [
    (4, 0.5, 32, 2 * 32),      # two words in two sectors
    (4, 0.25, 32, 32),         # one sector
    (4, 0.1, 32, 32),          # less than a sector's worth: still one transaction
    (4, 0.5, 128, 128),        # one 128-byte transaction
    (8, 0.5, 32, 4 * 32),      # 8-byte words: 128 bytes
    (4, 1.0, 32, 128),         # coalesced, as before
    (4, 4.0, 32, 512),         # 16 sectors
    (16, 1.0, 32, 512),        # float4, as before
])
def test_the_bytes_of_a_strided_warp_access(width, stride, segment, expected):
    assert access_bytes_per_warp(width, stride, "strided", segment) == expected


def test_below_one_element_the_bytes_grow_with_the_stride_and_never_pass_a_coalesced_access():
    strides = [0.05 * k for k in range(1, 20)]
    nbytes = [access_bytes_per_warp(4, s, "strided", 32) for s in strides]
    assert nbytes == sorted(nbytes) and nbytes[0] == 32 and nbytes[-1] < 128
    assert all(lines_touched(4, s, "strided") == 1 for s in strides)


def test_an_instruction_takes_a_stride_below_one_and_refuses_zero_or_negative():
    ins = Instruction.make("i", "LDG", stride=0.5)
    assert access_cost(ins)["sectors_per_request"] == 2
    for bad in (0.0, -1.0):
        with pytest.raises(GraphError, match="stride must be a number > 0"):
            Instruction.make("i", "LDG", stride=bad)
