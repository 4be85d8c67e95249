"""The SASS import pauses the cyclic garbage collector while it runs, and restores it."""
import gc

import pytest

from gpumodeler.core.kernel.graph import Instruction
from gpumodeler.core.kernel.sass import build, listing
from gpumodeler.core.kernel.collector import collector_paused


@pytest.fixture
def gc_enabled():
    was = gc.isenabled()
    gc.enable()
    yield
    if was:   # as it was before the test, whatever the test left
        gc.enable()
    else:
        gc.disable()


def test_paused_while_running_and_restored(gc_enabled):
    seen = []

    @collector_paused()
    def work():
        seen.append(gc.isenabled())
        return 7

    assert work() == 7
    assert seen == [False]
    assert gc.isenabled()


def test_restored_when_raising(gc_enabled):
    @collector_paused()
    def fails():
        raise ValueError("x")

    with pytest.raises(ValueError):
        fails()
    assert gc.isenabled()


def test_left_off_when_it_was_off(gc_enabled):
    gc.disable()

    @collector_paused()
    def work():
        return gc.isenabled()

    assert work() is False
    assert not gc.isenabled()


def test_nested_leaves_it_to_the_outermost(gc_enabled):
    inner_seen = []

    @collector_paused()
    def inner():
        inner_seen.append(gc.isenabled())

    @collector_paused()
    def outer():
        inner()
        return gc.isenabled()  # still paused after the inner call

    assert outer() is False
    assert inner_seen == [False]
    assert gc.isenabled()


def test_the_parser_pauses_it(gc_enabled):
    seen = []
    real = listing._parse_instruction

    def spy(*a, **k):
        seen.append(gc.isenabled())
        return real(*a, **k)

    listing._parse_instruction = spy
    try:
        listing.parse_listing("code for sm_90\n\tFunction : k\n"
                              "        /*0000*/                   EXIT ;  "
                              "/* 0x000000000000794d */\n"
                              "                                            "
                              "/* 0x000fea0003800000 */\n")
    finally:
        listing._parse_instruction = real
    assert seen == [False]
    assert gc.isenabled()


def test_instances_made_by_columns_equal_those_made_one_by_one():
    kws = [{"opcode": "FFMA", "unit": "cuda_core", "latency_class": "fp32", "label": "a"},
           {"opcode": "LDG.E", "unit": "ldst", "space": "global", "is_load": True, "width_bytes": 8}]
    made = build._made(Instruction, kws, id=["i0", "i1"])
    assert made == [Instruction(id="i0", **kws[0]), Instruction(id="i1", **kws[1])]
    with pytest.raises(TypeError, match="opcode"):
        build._made(Instruction, [{"unit": "cuda_core"}], id=["i0"])
