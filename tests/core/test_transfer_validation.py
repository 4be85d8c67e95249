"""Honest transfer calibration: sizes as whole bytes (one size printed in several units is one
size), nested and grouped leave-one-out (recomputed here independently), the log-log
interpolation as a candidate the chosen model never loses to, and conservative
extrapolation."""
import numpy as np
import pytest

from gpumodeler.core.measurements.importer import import_text
from gpumodeler.core.transfers.fit import (
    INTERPOLATION, SIMPLER_TOLERANCE, candidate_knots, fit_transfer_model)
from gpumodeler.core.transfers.models import knot_time_s
from gpumodeler.core.transfers.selection import merge_sizes, select_copies

KiB, MiB, GiB = 2**10, 2**20, 2**30


def synthetic(seed, sizes, bw_of, ts=6e-6, noise=0.03, repeats=1):
    rng = np.random.default_rng(seed)
    n = np.repeat(np.asarray(sizes, float), repeats)
    t = (ts + n / bw_of(n)) * (1 + noise * rng.standard_normal(n.size))
    return n, t


def staged(n):
    """A pageable host: fast while the staging buffer holds the copy, slower beyond."""
    return np.where(n <= 1 * MiB, 10e9, np.where(n <= 8 * MiB, 6e9, 5.5e9))


SIZES = [4 * 2**k for k in range(0, 29, 2)]          # 4 B .. 1 GiB, 15 sizes


# -- whole bytes ------------------------------------------------------------------------------

def nvprof_trace(rows):
    """An nvprof GPU trace of copies, one run per (size unit, [(size text, µs)])."""
    out = ["==1== NVPROF is profiling process 1, command: ./copies"]
    header = ('"Start","Duration","Size","Throughput","SrcMemType","DstMemType","Device",'
              '"Context","Stream","Name"')
    start = 0.0
    for unit, copies in rows:
        out += [header, f"us,us,{unit},GB/s,,,,,,"]
        for size_text, us in copies:
            size_b = float(size_text) * {"B": 1, "KB": KiB, "MB": MiB, "GB": GiB}[unit]
            thr = size_b / (us * 1e-6) / GiB
            out.append(f"{start:.3f},{us:.6f},{size_text},{thr:.6f},Pageable,Device,"
                       f"GeForce GTX 970 (0),1,7,[CUDA memcpy HtoD]")
            start += 1000.0
    return "\n".join(out) + "\n"


def test_one_size_printed_in_several_units_is_one_whole_size():
    text = nvprof_trace([("KB", [("2.500000", 8.3), ("4096.000000", 420.0)]),
                         ("MB", [("2.441406e-03", 8.4), ("4.000000", 425.0)]),
                         ("GB", [("2.384186e-06", 8.2), ("1.000000", 1.0e5),
                                 ("0.500000", 5.1e4)])])
    recs = import_text(text, "copies.csv").records
    assert sorted({r.size_bytes for r in recs}) == [2560.0, 4 * MiB, GiB / 2, GiB]
    sel = select_copies(recs, direction="htod")
    assert sorted(set(sel.sizes_bytes.tolist())) == [2560.0, 4 * MiB, GiB / 2, GiB]
    fit = fit_transfer_model(sel.sizes_bytes, sel.times_s)   # three sizes: it fits
    assert 8.2e-6 <= fit.model.startup_s <= 8.4e-6   # the one small size: its median


def test_coarse_prints_of_one_size_merge_within_their_digits():
    """1.396984 GB is ± 537 B: the same copy printed in MB (1430.511475, ± 0.5 B) is one size,
    represented by the more precise print; a size further away than the digits allow stays."""
    text = nvprof_trace([("MB", [("1430.511475", 1.2e5), ("1.000000", 110.0)]),
                         ("GB", [("1.396984", 1.21e5), ("0.001953", 200.0)])])
    recs = import_text(text, "copies.csv").records
    uncertainty = [r.metrics.get("size_uncertainty", (0.0, "B"))[0] for r in recs]
    assert max(uncertainty[:2]) < 0.03                               # MB: ± 0.52 B
    assert uncertainty[2:] == pytest.approx([0.5e-6 * GiB - 0.5] * 2)  # GB: ± 537 B
    sizes = select_copies(recs, direction="htod").sizes_bytes
    assert sizes[0] == sizes[2] == round(1430.511475 * MiB)
    assert sorted(set(sizes.tolist()))[:2] == [MiB, round(0.001953 * GiB)]
    assert merge_sizes([100.0, 101.0], [0.0, 0.0]).tolist() == [100.0, 101.0]


# -- nested, grouped leave-one-out, recomputed --------------------------------------------------

def independent_choice(n, t, names):
    """The selection rule, recomputed: leave-one-size-out errors of every candidate on
    (n, t), the fewest regimes within SIMPLER_TOLERANCE of the best, the interpolation if
    it does better."""
    errs = {k: [] for k in names}
    for s in np.unique(n):
        out = n == s
        models, _, _ = candidate_knots(n[~out], t[~out], names)
        for k in names:
            ts, xs, ys, edges = models[k]
            errs[k] += list(np.abs(knot_time_s(ts, xs, ys, n[out], edges) - t[out]) / t[out])
    mape = {k: 100 * np.mean(v) for k, v in errs.items()}
    counts = [k for k in names if k != INTERPOLATION]
    best = min(mape[k] for k in counts)
    chosen = [k for k in counts if mape[k] <= best * (1 + SIMPLER_TOLERANCE)][0]
    return INTERPOLATION if mape[INTERPOLATION] < mape[chosen] else chosen


@pytest.mark.parametrize("seed", [1, 2])
def test_reported_loo_mape_is_the_nested_leave_one_out(seed):
    n, t = synthetic(seed, SIZES[3:], staged, repeats=2)   # 12 sizes, two copies each
    fit = fit_transfer_model(n, t)
    names = [str(r) for r in range(1, 6)] + [INTERPOLATION]
    errors = []
    for s in np.unique(n):
        out = n == s                                  # both copies of the size leave together
        chosen = independent_choice(n[~out], t[~out], names)
        models, _, _ = candidate_knots(n[~out], t[~out], [chosen])
        ts, xs, ys, edges = models[chosen]
        errors += list(np.abs(knot_time_s(ts, xs, ys, n[out], edges) - t[out]) / t[out])
    assert fit.loo_mape == pytest.approx(100 * np.mean(errors), rel=1e-12)
    assert fit.loo_median_ape == pytest.approx(100 * np.median(errors), rel=1e-12)
    # the non-nested choice of the same data is at least as optimistic
    assert fit.candidates[int(fit.chosen) if fit.chosen != INTERPOLATION else INTERPOLATION] \
        <= fit.loo_mape * (1 + 1e-12)


def test_copies_of_one_size_leave_together():
    """The held-out prediction of a size does not depend on its other copies' times."""
    n, t = synthetic(3, SIZES[3:], staged, repeats=3)
    fit = fit_transfer_model(n, t)
    target = n == SIZES[8]
    t2 = t.copy()
    t2[np.flatnonzero(target)[1:]] *= 3.0   # the other copies of that size, far off
    fit2 = fit_transfer_model(n, t2)
    first = np.flatnonzero(target)[0]
    assert fit2.loo_relative_errors[first] == pytest.approx(fit.loo_relative_errors[first],
                                                            rel=1e-12)


@pytest.mark.parametrize("seed, bw", [(4, staged), (5, lambda n: 2e9 * (n / MiB) ** 0.15),
                                      (6, lambda n: np.full_like(n, 11e9))],
                         ids=["steps", "power-law", "flat"])
def test_chosen_model_is_never_worse_than_log_log_interpolation(seed, bw):
    n, t = synthetic(seed, SIZES, bw, repeats=2)
    fit = fit_transfer_model(n, t)
    assert INTERPOLATION in fit.candidates
    chosen = INTERPOLATION if fit.chosen == INTERPOLATION else int(fit.chosen)
    assert fit.candidates[chosen] <= fit.candidates[INTERPOLATION]


def test_extrapolation_is_never_faster_than_the_nearest_measured_size():
    """The last regime's mean bandwidth is above its largest size's own: beyond the data the
    bandwidth is the largest size's, not the regime's."""
    n = np.array([4.0, 64.0, 1024.0, 16 * KiB, 256 * KiB, 4 * MiB, 16 * MiB, 64 * MiB])
    bw = np.array([1e9, 1e9, 1e9, 1e9, 1e9, 6.6e9, 6.2e9, 5.0e9])
    t = 5e-6 + n / bw
    fit = fit_transfer_model(n, t, regimes=2)
    last = fit.model.regimes[-1]
    assert last.bandwidth_bytes_per_s > 5.2e9                   # the regime's mean
    beyond = fit.model.bandwidth_bytes_per_s(1 * GiB)
    own = 64 * MiB / (fit.model.time_s(64 * MiB) - fit.model.startup_s)
    assert beyond <= 5.0e9 * 1.01 and beyond <= own * 1.01
    assert fit.model.time_s(1 * GiB) >= fit.model.startup_s + GiB / 5.05e9
    # and the stored form keeps it
    from gpumodeler.core.transfers.models import TransferModel
    again = TransferModel.from_dict(fit.model.to_dict())
    assert again.time_s(1 * GiB) == fit.model.time_s(1 * GiB)
