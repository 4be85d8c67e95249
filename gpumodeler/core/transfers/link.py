"""Host<->device transfer time: Gajger eq. 4.8 and 5.5, PCIe bandwidth table 4.3.

    T = t_s + n / bw                  (4.8, point-to-point communication)
    T = t_s + n / (bw × λ)            (5.5, λ and t_s per direction)

``n`` in bytes, ``bw`` the nominal per-direction bandwidth in bytes/s, t_s in seconds.
Transfers in sequence add (cudaMemcpy is blocking, Fig. 5.23).

PCIe per-direction bandwidth: generations 1.x–3.x are Gajger's Table 4.3 verbatim
(GB/s = 1e9 B/s; x1/x4/x8/x16). Other lane counts of those generations scale the x1 value.
4.0 and 5.0 follow the same rule as 3.0 (128b/130b encoding at 16 and 32 GT/s per lane:
1.969 and 3.938 GB/s per lane); 6.0 runs 64 GT/s per lane in FLIT mode, whose 256-byte
flits carry 242 bytes of TLP and DLLP data (the rest is FEC and CRC): 64/8 × 242/256 =
7.5625 GB/s per lane. Protocol overhead beyond the encoding is what λ absorbs.
"""
from __future__ import annotations

import math

import numpy as np

from gpumodeler.core.device import LinkSpec
from gpumodeler.core.errors import InvalidParameter

_TABLE_4_3 = {  # GB/s per direction (Gajger Table 4.3)
    "1": {1: 0.25, 4: 1.0, 8: 2.0, 16: 4.0},
    "2": {1: 0.5, 4: 2.0, 8: 4.0, 16: 8.0},
    "3": {1: 0.985, 4: 3.94, 8: 7.9, 16: 15.8},
}
_PER_LANE_GB_S = {
    "1": 0.25, "2": 0.5, "3": 0.985,
    "4": 16 * 128 / 130 / 8, "5": 32 * 128 / 130 / 8, "6": 64 / 8 * 242 / 256,
}
PCIE_LANES = (1, 2, 4, 8, 12, 16, 32)
_NUMBERS = (float, int)


def pcie_bandwidth_bytes_per_s(generation, lanes: int) -> float:
    """Per-direction PCIe bandwidth in B/s for generation 1–6 (e.g. '3', '3.1', 4.0)."""
    gen = str(generation).strip().lower().removeprefix("gen").removeprefix("v")
    major = gen.split(".")[0]
    if major not in _PER_LANE_GB_S:
        raise InvalidParameter(f"PCIe generation must be 1 to 6 (e.g. 3.0), got {generation!r}")
    if lanes not in PCIE_LANES:
        raise InvalidParameter(f"PCIe lanes must be one of {', '.join(map(str, PCIE_LANES))}, got {lanes!r}")
    table = _TABLE_4_3.get(major, {})
    gb_s = table.get(lanes, _PER_LANE_GB_S[major] * lanes)
    return gb_s * 1e9


def transfer_time_s(n_bytes, *, startup_s, bandwidth_bytes_per_s, lam=1.0):
    """Eq. 5.5 (eq. 4.8 with λ = 1); every argument broadcasts."""
    if (isinstance(n_bytes, _NUMBERS) and isinstance(startup_s, _NUMBERS)
            and isinstance(bandwidth_bytes_per_s, _NUMBERS) and isinstance(lam, _NUMBERS)):
        # One transfer: the same checks and IEEE operations on Python floats.
        n, ts = float(n_bytes), float(startup_s)
        bw, lm = float(bandwidth_bytes_per_s), float(lam)
        if 0.0 <= n < math.inf and 0.0 <= ts < math.inf and 0.0 < bw < math.inf \
                and 0.0 < lm < math.inf:
            return ts + n / (bw * lm)
    n = np.asarray(n_bytes, dtype=float)
    if np.any(~np.isfinite(n)) or np.any(n < 0):
        raise InvalidParameter(f"transfer size must be a number of bytes >= 0, got {n_bytes}")
    ts = np.asarray(startup_s, dtype=float)
    if np.any(ts < 0) or np.any(~np.isfinite(ts)):
        raise InvalidParameter(f"startup time must be >= 0 s, got {startup_s}")
    bw = np.asarray(bandwidth_bytes_per_s, dtype=float)
    if np.any(bw <= 0) or np.any(~np.isfinite(bw)):
        raise InvalidParameter(f"bandwidth must be > 0 B/s, got {bandwidth_bytes_per_s}")
    lm = np.asarray(lam, dtype=float)
    if np.any(lm <= 0) or np.any(~np.isfinite(lm)):
        raise InvalidParameter(f"λ must be > 0, got {lam}")
    t = ts + n / (bw * lm)
    return float(t) if t.ndim == 0 else t


def link_transfer_time_s(link: LinkSpec, direction: str, n_bytes):
    """Transfer time of ``n_bytes`` over ``link`` in ``direction`` ('htod' or 'dtoh'):
    the link's calibrated model of that direction when it has one (models.py), else eq. 5.5."""
    model = link.transfer_model(direction)
    if model is not None:
        return model.time_s(n_bytes)
    startup, bw, lam = link.direction(direction)
    return transfer_time_s(n_bytes, startup_s=startup, bandwidth_bytes_per_s=bw, lam=lam)


def transfers_time_s(link: LinkSpec, transfers) -> tuple[list, object]:
    """Times of ``[(direction, n_bytes), ...]`` in sequence: (each time, total)."""
    times = [link_transfer_time_s(link, d, n) for d, n in transfers]
    total = sum(times) if times else 0.0
    return times, total
