"""resources/validation/amaris2018.csv: times of Amarís' vector/matrix kernels on his three
Maxwell GPUs derived from his tables (docs/validation.md), each row recomputed here from the
thesis' numbers; the default model's error on the set held as a ceiling; the rows predicted
as `predict` predicts them; the coalesced/uncoalesced pairs' predicted ratios."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from gpumodeler.core.validation import parse_csv
from validation_ceilings import assert_default_within_ceilings, validate_json
from in_process import cli
from test_validate_as_predict import predict_argv

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "resources" / "validation" / "amaris2018.csv"

#: Amarís 2018 Table 2.2 (total cores P, clock R in MHz) for the Maxwell boards, keyed by the
#: device database's name, with the short name the thesis' tables use.
GPUS = {"GeForce GTX TITAN X (Maxwell)": ("TitanX", 3072, 1076),
        "GeForce GTX 970": ("GTX-970", 1664, 1279),
        "GeForce GTX 980": ("GTX-980", 2048, 1216)}
#: Amarís 2018 Table 3.3, the Maxwell rows (λ per kernel and GPU).
LAMBDA = {
    "TitanX": {"MMGU": 9.5, "MMGC": 36, "MMSU": 36, "MMSC": 110, "MAU": 3.0, "MAC": 9.5,
               "vAdd": 7.0, "dotP": 9.75},
    "GTX-970": {"MMGU": 13, "MMGC": 44, "MMSU": 46, "MMSC": 120, "MAU": 3.75, "MAC": 9.5,
                "vAdd": 8.0, "dotP": 10.5},
    "GTX-980": {"MMGU": 13, "MMGC": 44, "MMSU": 46, "MMSC": 120, "MAU": 3.25, "MAC": 9.5,
                "vAdd": 7.0, "dotP": 9.5},
}
#: Amarís 2018 §3.3: FMA 2 and add 24 cycles, g_GM = 500 and g_SM = 5 cycles.
FMA, ADD, G_GM, G_SM = 2, 24, 500, 5

#: The default model's (gajger, λ = 1) median APE per family on amaris2018.csv, measured
#: 2026-11-28, rounded up to 0.1 percentage point: a change that raises one fails, one that
#: lowers one lowers its ceiling here. The roofline's medians the same day: matrix 22.9,
#: uncoalesced 9.7, streaming 32.7, reduction 22.5. The matrix mean went from 88.8 % to
#: 82.9 % when the loads of loops that run no trip left the L2 working sets (reuse.py), its
#: median from 57.3 % to 44.7 % (mean 52.7 %) when a 16×16 warp of two rows, one word
#: each, was charged its 2 sectors instead of one word per lane (launch_shape.py), and to
#: 22.9 % when a shared-memory request was charged its wavefronts (an LDS.128 per
#: half-warp: MMSC's row broadcasts 2, MMSU's column reads 16).
GAJGER_MEDIAN_CEILING = {"matrix": 23.0, "uncoalesced": 9.8, "streaming": 32.8,
                         "reduction": 17.2}
ROWS_PER_FAMILY = {"matrix": 24, "uncoalesced": 6, "streaming": 12, "reduction": 6}


def bsp_cycles(kernel: str, n: int, grid_blocks: int) -> float:
    """Cycles per thread of Amarís' BSP model (2018 eq. 3.3 numerator per thread, with eq.
    3.4 and 3.6, L1 = L2 = 0) for the counts of his Table 3.2."""
    if kernel.startswith("MM"):
        comm_sm = (2 * n + 1) * G_SM if kernel.startswith("MMS") else 0  # ld_0 = 2n, st_0 = 1
        return n * FMA + (2 * n + 1) * G_GM + comm_sm                    # ld_1 = 2n, st_1 = 1
    if kernel in ("MAU", "MAC", "vAdd"):
        return ADD + 3 * G_GM                                            # ld_1 = 2, st_1 = 1
    # dotP: comp 96, ld_1 = 2, st_1 = 1/GS, ld_0 = st_0 = log2(256)
    return 96 + (2 + 1 / grid_blocks) * G_GM + 2 * math.log2(256) * G_SM


@pytest.fixture(scope="module")
def runs():
    return parse_csv(SET.read_text(encoding="utf-8"), str(SET))


@pytest.fixture(scope="module")
def set_json(devices_db, tmp_path_factory):
    """The set's `validate --json` output with every model (the one
    test_validate_peak_roofline.py reads too: one run a session), only read by the tests, in
    an environment like gpumodeler_env's."""
    return validate_json(devices_db, tmp_path_factory.mktemp("amaris"), SET)


def test_every_row_is_t_k_at_lambda_1_over_the_published_lambda(runs):
    """T_m = T_k(λ=1)/λ = t·cycles/(R·P)/λ (Amarís 2018 eq. 3.3 and §3.2's definition of λ)."""
    assert len(runs) == sum(ROWS_PER_FAMILY.values())
    for run in runs:
        m = re.search(r", (\w+) on ([\w-]+), n = (\d+)$", run.source)
        assert m and run.source.startswith("Amaris 2018 §3.3 Tables 3.2, 3.3 and 2.2"), run.source
        kernel, short, n = m.group(1), m.group(2), int(m.group(3))
        name, cores, clock = GPUS[run.device]
        assert short == name and run.sm_clock_mhz == clock
        blocks = math.prod(run.grid) if isinstance(run.grid, tuple) else run.grid
        threads = blocks * math.prod(run.block if isinstance(run.block, tuple) else (run.block,))
        side = 16 if kernel.startswith("M") else 256
        assert blocks == (-(-n // side)) ** (2 if kernel.startswith("M") else 1)
        expected = threads * bsp_cycles(kernel, n, blocks) / (clock * 1e6 * cores) \
            / LAMBDA[short][kernel]
        assert run.measured == pytest.approx(expected, rel=1e-5), run.line
        assert run.unit == "s" and "derived" in run.note and f"lambda = {LAMBDA[short][kernel]:g}" in run.note


def test_the_rows_give_the_listing_s_registers_and_shared_memory(runs):
    for run in runs:
        listing = (SET.parent / run.kernel).read_text(encoding="utf-8")
        m = re.search(r"REG:(\d+) STACK:\d+ SHARED:(\d+)", listing)
        assert (run.registers, run.shared_bytes) == (int(m.group(1)), int(m.group(2))), run.line


def test_default_model_median_error_per_family_stays_below_its_ceiling(set_json):
    assert_default_within_ceilings(set_json, GAJGER_MEDIAN_CEILING, ROWS_PER_FAMILY,
                                   "amaris2018.csv")


def test_default_model_is_never_above_the_roofline_on_a_family(set_json):
    for c in set_json["default_vs_baseline"]:
        assert c["median_ape_percent"] <= c["baseline_median_ape_percent"] + 1e-9, c


def _times(set_json, model="gajger"):
    out = {}
    for row in set_json["rows"]:
        kernel = Path(row["kernel"]).name.split(".")[0]
        out[(kernel, row["gpu"], str(row["grid"]))] = (row["models"][model]["time_s"],
                                                       row["measured_s"])
    return out


def test_an_uncoalesced_kernel_is_predicted_slower_than_its_coalesced_pair(set_json):
    """MAU/MAC and MMGU/MMGC: the pairs differ only in which index follows threadIdx.x
    (Amarís 2018 §2.2.2); the derived times put them 2.5–3.8× apart (Table 3.3's λ ratios).

    MAU/MAC: 4.0× predicted (16 sectors per request against 4, counted by hand in
    tests/core/test_sass_launch_shape.py), within 1.5× of the derived ratio (the pairs'
    blind goal) except on the GTX 970 (2.53 derived: 1.58×), held so that no other pair
    slips.

    MMGU/MMGC: 8.4–11.8× predicted against 3.4–3.8× derived, 2.2–3.11× off, held as a
    ceiling. The ratio was 3.6–6.4× while MMGC's A[i·n + k] was charged 4 sectors per
    request where its warp of two rows touches 2 (one word per lane); with its exact sectors
    MMGC's rows came within 4–19 % on the GTX 970 and 980 (29–53 % too fast on the TITAN X),
    and what is left is MMGU's: its unrolled reads A[j·n + k], A[j·n + k + 1], … of one
    lane's sector are grouped as neighbours at import (a lane stride holding a parameter),
    but on these Maxwell boards no L1 caches a plain LDG and no L2 bandwidth bounds the
    hits, so they stay DRAM traffic (credited, they made MMGU/MMGC 1.0×): its A is charged
    8× its DRAM sectors, as before the grouping (core.kernel.sass.reuse)."""
    t = _times(set_json)
    ratios = {}
    for (kernel, gpu, grid), (pred_u, meas_u) in t.items():
        if kernel not in ("mau", "mmgu"):
            continue
        pred_c, meas_c = t[({"mau": "mac", "mmgu": "mmgc"}[kernel], gpu, grid)]
        predicted, derived = pred_u / pred_c, meas_u / meas_c
        assert predicted > derived > 2.5, (kernel, gpu, grid, predicted, derived)
        ratios[kernel, gpu, grid] = predicted / derived
    assert len(ratios) == 12
    mau = {k: r for k, r in ratios.items() if k[0] == "mau"}
    assert max(mau.values()) < 1.6, mau
    assert {k for k, r in mau.items() if r >= 1.5} <= {
        ("mau", "GeForce GTX 970", "[128, 128]"), ("mau", "GeForce GTX 970", "[512, 512]")}, mau
    mmgu = {k: r for k, r in ratios.items() if k[0] == "mmgu"}
    assert max(mmgu.values()) < 3.2, mmgu


def test_the_shared_memory_multiplies_are_within_1_45x_of_their_derived_times(set_json):
    """MMSU and MMSC are bound by the shared-memory banks: with each request charged its
    wavefronts (LDS.128 served per half-warp, core/kernel/sass/addresses.py) every row is
    predicted within 1.45× of its derived time (0.71–1.09×; 0.43–0.65× when an LDS.128 was
    charged one bank cycle)."""
    for (kernel, gpu, grid), (predicted, measured) in _times(set_json).items():
        if kernel in ("mmsu", "mmsc"):
            assert 1 / 1.45 < predicted / measured < 1.45, (kernel, gpu, grid, predicted / measured)


def test_every_row_is_what_predict_gives(gpumodeler_env, capsys, tmp_path, runs, set_json):
    """One row per kernel (the GTX 980, the smaller size): `validate` predicts it as
    `predict --graph` does on the graph `kernel import` writes from the same listing."""
    by_line = {r["line"]: r for r in set_json["rows"]}
    seen = set()
    for run in runs:
        if run.device != "GeForce GTX 980" or run.kernel in seen:
            continue
        seen.add(run.kernel)
        graph = tmp_path / (Path(run.kernel).stem + ".json")
        code, _, err = cli(capsys, "kernel", "import", SET.parent / run.kernel, "-o", graph)
        assert code == 0, err
        out = json.loads(cli(capsys, *predict_argv(run, graph), "--json")[1])
        assert by_line[run.line]["models"]["gajger"]["time_s"] == pytest.approx(
            out["kernel_time_s"], rel=1e-12), run.kernel
    assert len(seen) == 8
