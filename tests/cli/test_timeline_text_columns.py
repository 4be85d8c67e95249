"""`timeline`'s text written a column at a time (cmd_timeline.step_lines and _times): the
same lines as the step-at-a-time rule (below, written out as it stood) for any columns."""
import math
import random
import sys
from pathlib import Path

from hypothesis import given, settings, strategies as st

from gpumodeler.cli import cmd_timeline, common
from gpumodeler.core.units_format import format_time

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from repetitions import repetitions  # noqa: E402


def line_by_line(names, engines, starts, ends, energies, critical, width, fmt_time) -> str:
    """The step lines one step at a time: each an f-string of its values."""
    lines = []
    for name, engine, start, end, e, c in zip(names, engines, starts, ends, energies, critical):
        energy = "?" if e is None else f"{e:.4g} J"
        lines.append(f"{name:<{width}}  {(engine or '-'):<18} {fmt_time(start):>12} "
                     f"{fmt_time(end):>12} {energy:>10}{' *' if c else ''}\n")
    return "".join(lines)


#: magnitudes on both sides of every unit's edge, the edges themselves and the odd floats
EDGES = [1.0, 1e-3, 1e-6, 1e-9, 999.9995e-6, 0.9999995, 0.0009999995, 5e-324, 1e300]
ODD = [0.0, -0.0, math.nan, math.inf, -math.inf]


def edge_values(rng: random.Random, n: int) -> list:
    values = []
    for _ in range(n):
        pick = rng.random()
        if pick < 0.1:
            values.append(rng.choice(ODD))
        elif pick < 0.3:
            edge = rng.choice(EDGES)
            values.append(rng.choice([edge, math.nextafter(edge, 0), math.nextafter(edge, 2e300)])
                          * rng.choice([1, -1]))
        else:
            values.append(rng.choice([1, -1]) * 10 ** rng.uniform(-12, 4))
    return values


@settings(max_examples=repetitions(30, 200), deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_times_are_fmt_time_of_each(seed):
    rng = random.Random(seed)
    values = edge_values(rng, rng.randrange(1, 600))
    values += rng.choices(values, k=rng.randrange(len(values) + 1))   # repeated values
    rng.shuffle(values)
    assert cmd_timeline._times(values, common.fmt_time) == list(map(common.fmt_time, values))


def test_times_of_many_values_take_the_column_route_and_other_formats_their_own():
    values = edge_values(random.Random(7), 5_000)
    assert cmd_timeline._times(values, common.fmt_time) == list(map(common.fmt_time, values))

    def in_ns(t):
        return format_time(t, 3, unit=("ns", 1e-9))
    assert cmd_timeline._times(values, in_ns) == list(map(in_ns, values))
    mixed = values[:100] + [3, 2**70]   # (not only floats: each written by fmt_time)
    assert cmd_timeline._times(mixed, common.fmt_time) == list(map(common.fmt_time, mixed))


@settings(max_examples=repetitions(30, 200), deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_step_lines_are_the_lines_one_step_at_a_time(seed):
    rng = random.Random(seed)
    n = rng.randrange(0, 400)
    names = [rng.choice(["k", "kernel<float>", "[CUDA memcpy HtoD]", "ünïcødé 名前", "50% off",
                         "%s %d", "x" * rng.randrange(1, 90)]) for _ in range(n)]
    engines = [rng.choice([None, "", "gpu1/compute", "gpu2/copy-htod", "%s"]) for _ in range(n)]
    starts = [t for t in edge_values(rng, n) if not math.isnan(t)] + [0.0] * n
    ends = starts[1:n] + [1e-3]
    starts = starts[:n]
    ends = ends[:n]
    energies = [rng.choice([None, 0.0, -0.0, 1.5e-3, rng.random(), 1e5 * rng.random()])
                for _ in range(n)]
    critical = [rng.random() < 0.3 for _ in range(n)]
    width = max(map(len, names), default=4)
    columns = (names, engines, starts, ends, energies, critical)
    assert cmd_timeline.step_lines(*columns, width, common.fmt_time) == \
        line_by_line(*columns, width, common.fmt_time)


@settings(max_examples=repetitions(30, 200), deadline=None)
@given(st.integers(0, 2**32 - 1),
       st.sampled_from([(0, ""), (12, " "), (3, ""), (10, "|\n"), (12, " 50% %s")]))
def test_padded_times_are_fmt_time_of_each_padded(seed, layout):
    """(the column route pads the number so that number, space and unit fill the width:
    as "%12s" pads the whole text; a text wider than the width is not cut)"""
    width, end = layout
    rng = random.Random(seed)
    values = edge_values(rng, rng.randrange(1, 600))
    values += rng.choices(values, k=rng.randrange(len(values) + 1))
    want = [f"%{width}s" % common.fmt_time(v) + end for v in values]
    assert cmd_timeline._times(values, common.fmt_time, width, end) == want
    assert cmd_timeline._times(values + [1], common.fmt_time, width, end) == \
        want + [f"%{width}s" % common.fmt_time(1) + end]   # (not only floats: one at a time)


@settings(max_examples=repetitions(30, 200), deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_energy_cells_are_each_energy_written_and_padded(seed):
    rng = random.Random(seed)
    picks = [0.0, -0.0, 1.5e-3, 5e-324, 1e300, 12345678.9, -2.5, math.nan, math.inf, -math.inf]
    values = [rng.choice(picks) if rng.random() < 0.4 else 10 ** rng.uniform(-12, 12)
              for _ in range(rng.randrange(1, 500))]
    want = ["%10s" % f"{e:.4g} J" for e in values]
    assert cmd_timeline._energies(values) == want
    assert cmd_timeline._energies(values + [None, 3]) == want + ["         ?", "       3 J"]


def test_step_lines_with_every_energy_known_and_names_not_text():
    rng = random.Random(3)
    n = 300
    names = [rng.choice(["k", "名前", "%s", "[CUDA memcpy DtoH]"]) for _ in range(n)]
    engines = [rng.choice([None, "gpu1/compute", "gpu1/copy-dtoh-with-a-long-name"])
               for _ in range(n)]
    starts = [abs(t) for t in edge_values(rng, n) if not math.isnan(t)][:n]
    starts += [0.0] * (n - len(starts))
    ends = [t + 1e-5 for t in starts]
    energies = [rng.choice([0.0, -0.0, 1.5e-3, rng.random()]) for _ in range(n)]
    critical = [rng.random() < 0.3 for _ in range(n)]
    columns = (names, engines, starts, ends, energies, critical)
    assert cmd_timeline.step_lines(*columns, 18, common.fmt_time) == \
        line_by_line(*columns, 18, common.fmt_time)
    columns = ([1, 2.5, "x"] * 100, *columns[1:])   # (names that are not all text)
    assert cmd_timeline.step_lines(*columns, 5, common.fmt_time) == \
        line_by_line(*columns, 5, common.fmt_time)
