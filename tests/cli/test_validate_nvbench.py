"""resources/validation/nvbench-pmpp.csv: public nvbench GPU times of textbook kernels on an
RTX 3080, an RTX 3060, an RTX 3060 Ti and an RTX 2060 (docs/validation.md, "The public set"). The default model's error
per family held as a ceiling, the rows held to their cited files and listings, and what the
model does not see held as such (the row walks of a matrix-vector product)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpumodeler.core.validation import parse_csv
from validation_ceilings import assert_default_within_ceilings, validate_json

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "resources" / "validation" / "nvbench-pmpp.csv"
REPOSITORY = "R100001/Programming-Massively-Parallel-Processors"

#: The default model's (gajger, λ = 1) median APE per family, measured 2026-11-29 with the
#: RTX 3060's and 3060 Ti's rows and the 2060's constant-mask ones (matrix: with the
#: load/store units' row, the tiled product's peeled copies counted as they run and Turing's
#: L1 at 64 bytes a clock; stencil, streaming and uncoalesced with the assumed sustained
#: fraction at 0.85 of pin, the median once three published measurements of datacenter GPUs
#: joined it: 10.5, 7.8, 27.0 at 0.856), rounded
#: up to 0.1 percentage point: a change that raises one fails; one that lowers one lowers
#: its ceiling here. The one-line roofline's the same day: stencil 18.9, streaming 11.3,
#: uncoalesced 10.7, matrix-vector 73.3, matrix 70.4 (below the model on one family: see
#: docs/validation.md).
GAJGER_MEDIAN_CEILING = {"stencil": 11.0, "streaming": 8.7, "uncoalesced": 27.6,
                         "matrix-vector": 13.7, "matrix": 8.6}
ROWS_PER_FAMILY = {"stencil": 40, "streaming": 11, "uncoalesced": 11, "matrix-vector": 7,
                   "matrix": 18}
BOARDS = {"3080": "GeForce RTX 3080", "3060": "GeForce RTX 3060",
          "3060ti": "GeForce RTX 3060 Ti", "2060": "GeForce RTX 2060"}


@pytest.fixture(scope="module")
def runs():
    return parse_csv(SET.read_text(encoding="utf-8"), str(SET))


@pytest.fixture(scope="module")
def set_json(devices_db, tmp_path_factory):
    return validate_json(devices_db, tmp_path_factory.mktemp("nvbench"), SET)


def test_every_row_cites_the_file_commit_and_row_it_was_read_from(runs):
    assert len(runs) == sum(ROWS_PER_FAMILY.values())
    for run in runs:
        m = re.match(rf"{re.escape(REPOSITORY)} @ ([0-9a-f]{{40}}), Performance-Tests-NvBench/"
                     r"(\w+)/BenchResults/BenchResults(3080|3060ti|3060|2060)\.(csv|md): '([^']+)'",
                     run.source)
        assert m, run.source
        assert BOARDS[m.group(3)] == run.device
        assert run.unit == "s" and "nvbench" in run.note
        assert "GPU Time" in run.source or re.search(r"'Pass: Cold: [0-9.]+ms GPU'", run.source)


def test_the_rows_give_the_listing_s_registers_and_architecture(runs):
    for run in runs:
        listing = (SET.parent / run.kernel).read_text(encoding="utf-8")
        assert f"code for {run.arch}" in listing
        func = run.function or re.search(r"Function (\w+)", listing).group(1)
        m = re.search(rf"Function [^\n]*{func}[^\n]*:\n\s*REG:(\d+) STACK:\d+ SHARED:(\d+)",
                      listing)
        # the tiled product's tiles are dynamic shared memory (2 × 16 × 16 words at launch),
        # which no listing shows: the row gives the launch's
        dynamic = 2 * 16 * 16 * 4 if func == "matmul_tiled" else 0
        assert (run.registers, run.shared_bytes) == (int(m.group(1)), int(m.group(2)) + dynamic), \
            run.line


def test_default_model_median_error_per_family_stays_below_its_ceiling(set_json):
    assert_default_within_ceilings(set_json, GAJGER_MEDIAN_CEILING, ROWS_PER_FAMILY,
                                   "nvbench-pmpp.csv")


def _ratios(set_json, kernel):
    return {(row["gpu"], str(row["grid"])): row["models"]["gajger"]["time_s"] / row["measured_s"]
            for row in set_json["rows"] if row["kernel"].endswith(kernel)}


def test_the_uncoalesced_matrix_add_against_its_measured_ratio_on_ampere(set_json):
    """The coalesced/uncoalesced pair (16×16 blocks; lanes along a row or a row apart): the
    3080's runs measured 1.60× (n = 2048) and 1.85× (8192) between them, the 3060's 1.60×,
    1.67× and 1.95× (2048, 4096, 8192), the 3060 Ti's 1.22×, 1.31×, 1.31×; the model
    predicts 2.0× on all three. Within 1.5× (the blind goal) on the 3080 and the 3060; the
    3060 Ti's pair is 1.53–1.64× off, outside it, held below 1.7× (docs/validation.md). (The
    2060's 1.19× comes from its slow coalesced runs.)"""
    mau, mac = _ratios(set_json, "mau.sm_86.sass"), _ratios(set_json, "mac.sm_86.sass")
    assert set(mau) == set(mac) and len(mau) == 8
    for key in mau:
        off = mau[key] / mac[key]  # predicted ratio over measured ratio
        limit = 1.7 if key[0] == "GeForce RTX 3060 Ti" else 1.5
        assert 1 / limit < off < limit, (key, off)
    assert sum(1 for key in mau if not 1 / 1.5 < mau[key] / mac[key] < 1.5) == 3


def test_a_row_walk_per_lane_is_bound_by_the_l1_lines_but_one_launch(set_json):
    """Each lane walks its own row, unrolled 16 times: grouped, the walk's DRAM bytes are the
    matrix's, and each request's 32 lines cost the L1's data stage 32 cycles (docs/models.md,
    "The L1's data stage"). That sets the time of every launch here within 21 %, on three
    boards whose DRAM rates differ 2×, but one: rows of 512 on 256 blocks (every SM full),
    0.2× its measured time, which the DRAM's scattered page visits set and the model does not
    have (docs/validation.md). Before the row and the grouping: 4.5–6.2× slow on rows of 32,
    2.5–3.1× on the 8192 × 8192 product of the 3060 and 3060 Ti."""
    ratio = {}
    for row in set_json["rows"]:
        if row["kernel"].endswith("matvec.sm_86.sass"):
            key = (row["gpu"], row["set"]["param_0x17c"], str(row["grid"]))  # the row length
            ratio[key] = row["models"]["gajger"]["time_s"] / row["measured_s"]
    assert len(ratio) == 7
    paged = ("GeForce RTX 3080", 512.0, "256")
    assert 0.15 < ratio.pop(paged) < 0.3
    assert all(1 / 1.3 < r < 1.2 for r in ratio.values()), ratio
