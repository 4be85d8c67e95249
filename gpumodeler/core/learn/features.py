"""Feature sets of the learned predictors (Amarís 2018 §4.2) and the log2 transform.

* ``amaris`` — the thesis' Table 4.1 (§4.2.1): three GPU parameters (num_of_cores,
  max_clock_rate, Bandwidth) and ten application features (Input_Size, totalLoadGM,
  totalStoreGM, TotalLoadSM, TotalStoreSM, FLOPS SP, BlockSize, GridSize, No. threads,
  Achieved Occupancy), each read from the profiler metric of nvprof or Nsight Compute that
  counts it (:data:`METRIC_ALTERNATIVES`).
* ``extracted`` — the thesis' Algorithm 1 (§4.2.2): every metric present in all training
  rows, log2-transformed and normalised; those whose Spearman correlation with the time is
  at least 0.75 in magnitude; hierarchical clustering of them (average linkage on the
  distance 1 − |ρ| between features) cut at 5 (or 10) clusters; one feature per cluster;
  and two GPU parameters, the number of cores and the L2 size (§4.2.2 and Fig. 4.8: "number
  of cores and amount of L2 cache"; we read the number of cores as the GPU's total,
  num_of_cores, one of the two readings the text allows). The thesis picks a cluster's
  feature by a "variance analysis" it does not define; we take the cluster's feature with
  the largest |ρ| with the time (ties: the first in metric-name order). When fewer features
  pass the threshold than clusters are asked for, all that pass are kept; when none passes,
  the five (ten) with the largest |ρ|.
* ``analytical`` — the analytical models' own quantities (not in the thesis): the default
  model's and the roofline's times, the occupancy, warps launched, the latency bound,
  instructions and global-memory bytes of the kernel, and the GPU's cores, clock,
  bandwidth and L2 size.

Every feature is transformed by ``log2(1 + x)`` (Amarís 2018 §4.2.1 takes log2 of all data;
the ``1 +`` is our choice so that a count of zero, frequent in profiles, stays finite). A
feature a row does not have (a metric the profiler did not collect, a GPU parameter the
database lacks) is 0 before the transform, and said in the model's notes.
"""
from __future__ import annotations

import math

import numpy as np

from gpumodeler.core.errors import InvalidParameter

FEATURE_SETS = ("amaris", "extracted", "analytical")
SPEARMAN_THRESHOLD = 0.75
EXTRACTED_SIZES = (5, 10)

#: Table 4.1 features read from metrics: name -> alternatives, each a tuple of metrics summed
METRIC_ALTERNATIVES = {
    "totalLoadGM": (("gld_transactions",), ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",),
                    ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",)),
    "totalStoreGM": (("gst_transactions",), ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",),
                     ("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",)),
    "TotalLoadSM": (("shared_load_transactions",),
                    ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",)),
    "TotalStoreSM": (("shared_store_transactions",),
                     ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",)),
    "FLOPS_SP": (("flop_count_sp",), ("flop_count_sp_add", "flop_count_sp_mul", "flop_count_sp_fma"),
                 ("inst_fp_32",), ("smsp__sass_thread_inst_executed_op_fp32_pred_on.sum",),
                 ("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
                  "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
                  "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")),
}
OCCUPANCY_METRICS = (("achieved_occupancy", 1.0),
                     ("sm__warps_active.avg.pct_of_peak_sustained_active", 0.01),
                     ("Achieved Occupancy", 0.01))


def _num(value) -> float | None:
    return None if value is None else float(value)


def gpu_features(gpu) -> dict:
    """The eleven GPU parameters of Amarís 2018 §4.2.2 that the device database gives."""
    cores = gpu.sms * gpu.cuda_cores_per_sm if gpu.sms and gpu.cuda_cores_per_sm else None
    cc = None
    if gpu.compute_capability:
        try:
            cc = float(gpu.compute_capability)
        except ValueError:
            cc = None
    return {
        "compute_capability": cc, "max_clock_rate": _num(gpu.sm_clock_hz),
        "num_of_cores": _num(cores), "num_of_sm": _num(gpu.sms),
        "num_cores_sm": _num(gpu.cuda_cores_per_sm), "L2_size": _num(gpu.l2_bytes),
        "bus": _num(gpu.memory_bus_width_bits), "memory_clock": _num(gpu.memory_clock_hz),
        "theoretical_flops": 2.0 * cores * gpu.sm_clock_hz if cores and gpu.sm_clock_hz else None,
        "Bandwidth": _num(gpu.memory_bandwidth_bytes_per_s),
    }


def _metric(row, alternatives):
    for names in alternatives:
        if all(n in row.metrics for n in names):
            return sum(row.metrics[n] for n in names)
    return None


def _occupancy(row):
    for name, factor in OCCUPANCY_METRICS:
        if name in row.metrics:
            return row.metrics[name] * factor
    return None


def amaris_values(row) -> dict:
    """Table 4.1 of Amarís 2018 for one row (None where the row does not give it)."""
    g = gpu_features(row.gpu)
    values = {"num_of_cores": g["num_of_cores"], "max_clock_rate": g["max_clock_rate"],
              "Bandwidth": g["Bandwidth"], "Input_Size": row.size}
    for name, alts in METRIC_ALTERNATIVES.items():
        values[name] = _metric(row, alts)
    values.update({"BlockSize": float(math.prod(row.block)), "GridSize": float(math.prod(row.grid)),
                   "No_threads": float(row.threads), "Achieved_Occupancy": _occupancy(row)})
    return values


AMARIS_FEATURES = ("num_of_cores", "max_clock_rate", "Bandwidth", "Input_Size", "totalLoadGM",
                   "totalStoreGM", "TotalLoadSM", "TotalStoreSM", "FLOPS_SP", "BlockSize",
                   "GridSize", "No_threads", "Achieved_Occupancy")
ANALYTICAL_FEATURES = ("gajger_time", "roofline_time", "occupancy_warps_per_sm", "warps",
                       "latency_bound_cycles", "issued_instructions", "gmem_bytes",
                       "num_of_cores", "max_clock_rate", "Bandwidth", "L2_size")
EXTRACTED_GPU = ("num_of_cores", "L2_size")
#: the hybrid's residual regression: quantities that vary within one kernel on one GPU (a
#: GPU parameter would be extrapolated to an unseen GPU from the few GPUs of the training)
HYBRID_FEATURES = ("gajger_time", "gajger_over_roofline", "launch_share", "occupancy_warps_per_sm",
                   "warps", "issued_instructions", "gmem_bytes")
#: the time scale of ``launch_share`` = LAUNCH_SCALE_S / T_gajger: a kernel launch costs a few
#: µs whatever the kernel does, which a model of the kernel's own work leaves out, so short
#: kernels are under-predicted by a factor that grows as 1 + this share (a hinge in log2)
LAUNCH_SCALE_S = 5e-6


def analytical_values(row) -> dict:
    """The analytical models' quantities of one row (None where a model did not run)."""
    g = gpu_features(row.gpu)
    q = row.quantities
    warps = q.get("warps")
    total = (lambda k: q[k] * warps if k in q and warps is not None else None)
    gajger, roofline = row.analytical.get("gajger"), row.analytical.get("roofline")
    return {"gajger_time": gajger, "gajger_over_roofline": gajger / roofline
            if gajger is not None and roofline else None,
            "launch_share": LAUNCH_SCALE_S / gajger if gajger else None,
            "roofline_time": row.analytical.get("roofline"),
            "occupancy_warps_per_sm": q.get("occupancy_warps_per_sm"), "warps": warps,
            "latency_bound_cycles": q.get("latency_bound_cycles"),
            "issued_instructions": total("issued_instructions"), "gmem_bytes": total("gmem_bytes"),
            "num_of_cores": g["num_of_cores"], "max_clock_rate": g["max_clock_rate"],
            "Bandwidth": g["Bandwidth"], "L2_size": g["L2_size"]}


def metric_values(row) -> dict:
    """Every metric of the row, the launch's sizes and the GPU's parameters (the pool of
    the feature extraction and the values of an extracted model)."""
    values = dict(row.metrics)
    values.update({"Input_Size": row.size, "BlockSize": float(math.prod(row.block)),
                   "GridSize": float(math.prod(row.grid)), "No_threads": float(row.threads)})
    values.update({k: v for k, v in gpu_features(row.gpu).items()})
    return values


def values_of(row, feature_set: str) -> dict:
    if feature_set == "amaris":
        return amaris_values(row)
    if feature_set == "analytical":
        return analytical_values(row)
    if feature_set == "extracted":
        return metric_values(row)
    raise InvalidParameter(f"unknown feature set {feature_set!r}; valid: {', '.join(FEATURE_SETS)}")


def log2_row(row, feature_set: str, names) -> tuple[list[float], list[str]]:
    """(one row's log2(1 + x) of each feature, 0 where it lacks it; the names it lacks)."""
    values = values_of(row, feature_set)
    out, lacking = [], []
    for name in names:
        v = values.get(name)
        if v is None or not math.isfinite(v) or v < 0:
            lacking.append(name)
            out.append(0.0)
        else:
            out.append(math.log2(1.0 + v))
    return out, lacking


def log2_table(rows, feature_set: str, names, memo: dict | None = None) -> tuple[np.ndarray, list[str]]:
    """(the rows × features table of log2(1 + x), the names of features some row lacked).

    ``memo``: a dict the caller keeps over calls on the same row objects (the folds and
    methods of one evaluation), so that each row's values are worked out once."""
    names = tuple(names)
    table = np.zeros((len(rows), len(names)))
    lacking: set[str] = set()
    for i, row in enumerate(rows):
        if memo is None:
            values, missing = log2_row(row, feature_set, names)
        else:
            key = (id(row), feature_set, names)
            hit = memo.get(key)
            if hit is None or hit[0] is not row:  # the row object itself, not a reused id
                hit = memo[key] = (row, *log2_row(row, feature_set, names))
            _, values, missing = hit
        table[i] = values
        lacking.update(missing)
    return table, sorted(lacking)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation (ties get their mean rank); 0 when either is constant."""
    ra, rb = _ranks(a), _ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = math.sqrt(float(ra @ ra) * float(rb @ rb))
    return float(ra @ rb) / den if den > 0 else 0.0


def _ranks(v: np.ndarray) -> np.ndarray:
    order = np.argsort(v, kind="stable")
    ranks = np.empty(len(v))
    sorted_v = v[order]
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and sorted_v[j + 1] == sorted_v[i]:
            j += 1
        ranks[order[i:j + 1]] = 0.5 * (i + j)
        i = j + 1
    return ranks


def average_linkage(distance: np.ndarray, clusters: int) -> list[list[int]]:
    """Agglomerative clustering with average linkage until ``clusters`` remain (members as
    sorted index lists, ordered by their first member)."""
    groups = [[i] for i in range(len(distance))]
    while len(groups) > clusters:
        best = None
        for a in range(len(groups)):
            for b in range(a + 1, len(groups)):
                d = float(distance[np.ix_(groups[a], groups[b])].mean())
                if best is None or d < best[0]:
                    best = (d, a, b)
        assert best is not None  # more than `clusters` groups: at least one pair
        _, a, b = best
        groups[a] = sorted(groups[a] + groups[b])
        del groups[b]
    return sorted(groups)


def extract(rows, log2_times: np.ndarray, count: int = 5) -> tuple[list[str], dict]:
    """Amarís 2018 Algorithm 1 (module docstring): (feature names, details)."""
    if count not in EXTRACTED_SIZES:
        raise InvalidParameter(f"the extraction keeps 5 or 10 features, got {count}")
    pools = [metric_values(r) for r in rows]
    gpu_names = set(gpu_features(rows[0].gpu)) if rows else set()
    common = sorted(n for n in set.intersection(*(set(p) for p in pools))
                    if n not in gpu_names and all(p[n] is not None and math.isfinite(p[n])
                                                  and p[n] >= 0 for p in pools)) if pools else []
    table = np.array([[math.log2(1.0 + p[n]) for n in common] for p in pools]).reshape(len(rows), len(common))
    rho = {n: spearman(table[:, j], log2_times) for j, n in enumerate(common)}
    passing = [n for n in common if abs(rho[n]) >= SPEARMAN_THRESHOLD]
    if not passing:
        passing = sorted(common, key=lambda n: (-abs(rho[n]), n))[:count]
    if len(passing) <= count:
        chosen = passing
    else:
        idx = [common.index(n) for n in passing]
        sub = table[:, idx]
        dist = np.array([[1.0 - abs(spearman(sub[:, a], sub[:, b])) for b in range(len(idx))]
                         for a in range(len(idx))])
        chosen = [max((passing[k] for k in grp), key=lambda n: (abs(rho[n]), -passing.index(n)))
                  for grp in average_linkage(dist, count)]
    details = {"candidates": len(common), "passing": len(passing),
               "spearman": {n: rho[n] for n in chosen}}
    return list(chosen) + list(EXTRACTED_GPU), details
