"""A transfer-time model that holds on real copies: startup plus a size-dependent bandwidth.

Gajger's eq. 4.8/5.5 (Gajger 2017, §4.3 and §5.4.2) models a copy of ``n`` bytes as

    T(n) = t_s + n / (bw × λ)

with one effective bandwidth per direction. Gajger measured pinned-free ``cudaMemcpy`` on one
testbed and found the line adequate from 1 KiB to 2 GB (Fig. 5.17–5.18). Real *pageable*
copies on other hosts are not one line: one host measured host→device at 10.3 GB/s at 1 MiB
and about 6 GB/s from 4 MiB up, device→host at 6 GB/s at 1–2 MiB and 2.2–2.8 GB/s from
4 to 32 MiB (docs/calibration.md). The driver stages pageable copies through pinned buffers, and the
host's caches hold small buffers, so the effective bandwidth falls (or rises) in steps as
the size crosses those capacities. Fitting one line through such steps makes the startup
negative.

This module keeps eq. 4.8's form, ``T(n) = t_s + n / bw(n)``, with ``t_s >= 0`` and an
effective bandwidth that is constant within *regimes* (contiguous ranges of sizes) and
changes between them. Between the last measured size of one regime and the first of the
next nothing is known about where the change happens, so ``log bw`` is interpolated
linearly in ``log n`` across that gap (continuous, and never worse than a step placed
at the wrong size). Below the first regime and above the last, the bandwidth is that
regime's, or the nearest measured size's own when that is lower (``edge_bandwidths``: an
extrapolation is never faster than the nearest measured copy; a fit sets them).

A copy never takes less time than a smaller one. The piecewise form alone can say
otherwise: across a gap where the bandwidth rises faster than the size (a staging-buffer
step: 0.5 GB/s up to 4 kB, 4 GB/s from 8 kB), ``t_s + n / bw(n)`` falls (13 µs at 4 kB,
7 µs at 8 kB). The model's time is therefore the running maximum,

    T(n) = max over m <= n of (t_s + m / bw(m)),

which equals the piecewise time wherever that grows and holds the largest smaller copy's
time across such a gap. Within a regime ``n / bw`` grows; across a gap ``bw ∝ n^p`` makes
``n / bw(n)`` monotone, so the maximum is taken over ``n`` itself and the knots (the
regimes' first and last sizes) below it. A copy of 0 bytes takes ``t_s`` (Gajger notes the runtime short-cuts it; the
fit ignores such records).

Symbols and units: sizes in bytes, times in seconds, bandwidths in bytes/s.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpumodeler.core.errors import InvalidParameter


@dataclass(frozen=True)
class Regime:
    """Sizes ``first_size_bytes``..``last_size_bytes`` (measured ones) copy at one
    effective bandwidth."""

    first_size_bytes: float
    last_size_bytes: float
    bandwidth_bytes_per_s: float

    def to_dict(self) -> dict:
        return {"first_size_bytes": self.first_size_bytes,
                "last_size_bytes": self.last_size_bytes,
                "bandwidth_bytes_per_s": self.bandwidth_bytes_per_s}


def knot_time_s(startup_s: float, log_sizes, log_bandwidths, n_bytes, edge_bandwidths=None):
    """``T(n)`` of knots (log size, log bandwidth), ascending in size: ``t_s + n / bw(n)``
    with ``log bw`` linear in ``log n`` between knots and constant beyond them (capped by
    ``edge_bandwidths`` = (below, above) when given), as a running maximum over the knots
    below ``n`` (module docstring). ``n_bytes``: an array of sizes >= 0. The one formula of
    :meth:`TransferModel.time_s` and of the fit's cross-validation."""
    xs = np.asarray(log_sizes, dtype=float)
    ys = np.asarray(log_bandwidths, dtype=float)
    n = np.asarray(n_bytes, dtype=float)

    def piecewise(m):
        with np.errstate(divide="ignore"):
            logm = np.log(np.where(m > 0, m, 1.0))
        logbw = np.interp(logm, xs, ys)
        if edge_bandwidths is not None:
            below, above = (np.log(b) for b in edge_bandwidths)
            logbw = np.where(logm < xs[0], np.minimum(logbw, below), logbw)
            logbw = np.where(logm > xs[-1], np.minimum(logbw, above), logbw)
        return startup_s + m / np.exp(logbw)

    knots = np.exp(xs)
    held = np.maximum.accumulate(piecewise(knots))
    below_knot = np.searchsorted(knots, n, side="right") - 1   # the last knot <= n, -1: none
    t = piecewise(n)
    return np.where(below_knot >= 0, np.maximum(t, held[np.maximum(below_knot, 0)]), t)


@dataclass(frozen=True)
class TransferModel:
    """``T(n) = startup_s + n / bw(n)`` with ``bw`` piecewise constant by regime and
    log-log interpolated across the gaps between regimes (see the module docstring).
    ``edge_bandwidths``: (below, above) caps of the bandwidth outside the measured sizes."""

    startup_s: float
    regimes: tuple[Regime, ...]
    edge_bandwidths: tuple | None = None

    def __post_init__(self):
        if not (np.isfinite(self.startup_s) and self.startup_s >= 0):
            raise InvalidParameter(f"startup time must be a number of seconds >= 0, got {self.startup_s}")
        if not self.regimes:
            raise InvalidParameter("a transfer model needs at least one bandwidth regime")
        last = -np.inf
        for r in self.regimes:
            if not (np.isfinite(r.bandwidth_bytes_per_s) and r.bandwidth_bytes_per_s > 0):
                raise InvalidParameter(f"regime bandwidth must be > 0 B/s, got {r.bandwidth_bytes_per_s}")
            if not (0 < r.first_size_bytes <= r.last_size_bytes) or r.first_size_bytes <= last:
                raise InvalidParameter("regimes must cover increasing, non-overlapping sizes > 0 B")
            last = r.last_size_bytes
        if self.edge_bandwidths is not None and not (
                len(self.edge_bandwidths) == 2
                and all(np.isfinite(b) and b > 0 for b in self.edge_bandwidths)):
            raise InvalidParameter(f"edge bandwidths must be two numbers > 0 B/s, got "
                                   f"{self.edge_bandwidths}")

    def _knots(self):
        xs, ys = [], []
        for r in self.regimes:
            for x in dict.fromkeys((r.first_size_bytes, r.last_size_bytes)):
                xs.append(np.log(x))
                ys.append(np.log(r.bandwidth_bytes_per_s))
        return np.asarray(xs), np.asarray(ys)

    def bandwidth_bytes_per_s(self, n_bytes):
        """Effective bandwidth at ``n_bytes`` (array or scalar; sizes > 0)."""
        n = np.asarray(n_bytes, dtype=float)
        xs, ys = self._knots()
        with np.errstate(divide="ignore"):
            logn = np.log(np.where(n > 0, n, 1.0))
        bw = np.exp(np.interp(logn, xs, ys))
        if self.edge_bandwidths is not None:
            below, above = self.edge_bandwidths
            bw = np.where(logn < xs[0], np.minimum(bw, below), bw)
            bw = np.where(logn > xs[-1], np.minimum(bw, above), bw)
        return float(bw) if bw.ndim == 0 else bw

    def time_s(self, n_bytes):
        """Transfer time of ``n_bytes`` (array or scalar, bytes >= 0): the running maximum of
        the piecewise time over sizes up to ``n_bytes`` (module docstring), so it never falls
        as the size grows."""
        n = np.asarray(n_bytes, dtype=float)
        if np.any(~np.isfinite(n)) or np.any(n < 0):
            raise InvalidParameter(f"transfer size must be a number of bytes >= 0, got {n_bytes}")
        xs, ys = self._knots()
        t = knot_time_s(self.startup_s, xs, ys, n, self.edge_bandwidths)
        return float(t) if t.ndim == 0 else t

    def to_dict(self) -> dict:
        out = {"model": "regimes", "startup_s": self.startup_s,
               "regimes": [r.to_dict() for r in self.regimes]}
        if self.edge_bandwidths is not None:
            out["edge_bandwidths_bytes_per_s"] = [float(b) for b in self.edge_bandwidths]
        return out

    @classmethod
    def from_dict(cls, data) -> "TransferModel":
        """Inverse of :meth:`to_dict`; InvalidParameter for anything else."""
        try:
            if data.get("model") != "regimes":
                raise InvalidParameter(f"unknown transfer model {data.get('model')!r} (expected 'regimes')")
            regimes = tuple(Regime(float(r["first_size_bytes"]), float(r["last_size_bytes"]),
                                   float(r["bandwidth_bytes_per_s"])) for r in data["regimes"])
            edges = data.get("edge_bandwidths_bytes_per_s")
            return cls(float(data["startup_s"]), regimes,
                       None if edges is None else tuple(float(b) for b in edges))
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise InvalidParameter(f"not a transfer model ({type(exc).__name__}: {exc}); "
                                   "expected {model: 'regimes', startup_s, regimes: [...]}") from None
