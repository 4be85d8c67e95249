"""The under-filled and tail terms of the throughput-only models (``bsp``, ``roofline``).

Blocks are whole and an SM runs the blocks it is given (Volkov 2016 §5.6): the busiest SM
receives ``m = ceil(blocks / SMs)`` blocks. In a model without latency (a throughput or a
per-thread cost spread over the cores), the two wave terms of :mod:`kernel_terms` reduce to
one rule, the busiest SM's whole blocks instead of the mean ``blocks / SMs``:

* **under-filled GPU** (a grid smaller than one wave, ``blocks < SMs · cap`` with ``cap``
  the whole blocks an SM holds at the launch's occupancy; on by default): Gajger's wave of
  ``m`` blocks, ``max(L, m · warps per block / TB)`` (:mod:`kernel_terms`), is with no
  latency ``m · warps per block / TB``: the per-SM work of the busiest SM;
* **tail effect** (a grid of one wave or more; off by default, ``--tail``): the full waves
  and the last partial wave of the busiest SM, ``floor(m / cap)`` waves of ``cap`` blocks and
  one of ``m mod cap``, add up without latency to the same ``m`` blocks' work.

Both scale a per-SM cost by ``factor = m · SMs / blocks`` (≥ 1; 1 when the blocks spread
evenly). Resources shared by the whole GPU (DRAM, L2) are not per SM: with no per-SM cap on
the bandwidth (the rule of :func:`kernel_terms_vec.memory_bandwidth_per_active_sm`) the
SMs that finish early leave their share to the busiest one, so those levels keep their
total time; the roofline applies the factor to its per-SM ceilings only (the pipes and
shared memory), Amarís' BSP model to its whole cost (a per-thread cost over the cores).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from gpumodeler.core.models import kernel_terms as kt
from gpumodeler.core.models.kernel_terms_vec import term_effect
from gpumodeler.core.models.result import ModelInputs, TermEffect


@dataclass(frozen=True)
class WholeBlocks:
    """The busiest SM of one launch and which wave term applies to it."""

    blocks: int
    sms: int
    per_sm: int  # blocks on the busiest SM, ceil(blocks / SMs)
    capacity: int  # whole blocks an SM holds at the launch's occupancy
    warps_per_block: int
    underfilled: bool
    applies: str | None  # 'under-filled GPU', 'tail effect' or None
    factor: float  # per-SM cost multiplier: per_sm · SMs / blocks where a term applies, else 1

    def effects(self, before_s: float, after_s: float) -> list:
        """[under-filled GPU, tail effect] TermEffects, the applied one with its effect
        (``before_s`` → ``after_s``)."""
        if self.capacity < 1:
            note = "occupancy below one block per SM; wave terms need whole blocks"
            return [TermEffect("under-filled GPU", False, note=note),
                    TermEffect("tail effect", False, note=note)]
        spread = f"{self.blocks} blocks on {self.sms} SMs: the busiest SM runs {self.per_sm}"
        if self.underfilled:
            tail = TermEffect("tail effect", False, note="the grid is less than one wave")
            under = (term_effect("under-filled GPU", before_s, after_s, 1.0,
                                 f"{spread} block(s) in one wave")
                     if self.applies else TermEffect("under-filled GPU", False, note="switched off"))
            return [under, tail]
        under = TermEffect("under-filled GPU", False, note="the grid fills at least one wave")
        if not self.applies:
            return [under, TermEffect("tail effect", False, note="off by default; --tail")]
        full, rest = divmod(self.per_sm, self.capacity)
        return [under, term_effect("tail effect", before_s, after_s, 1.0,
                                   f"{spread}: {full} full wave(s) of {self.capacity} + {rest}")]


def busiest_sm(inputs: ModelInputs) -> WholeBlocks:
    """The launch's busiest SM and the wave term that applies (module docstring)."""
    gpu = inputs.gpu
    sms = int(gpu.require("sms"))
    wpb = kt.warps_per_block(inputs.block_size, gpu.require("warp_size"))
    blocks = kt.blocks_of(inputs.grid_size)
    cap = math.floor(float(inputs.occupancy) / wpb + 1e-9)
    per_sm = -(-blocks // sms)
    underfilled = cap >= 1 and blocks < sms * cap
    if cap < 1:
        applies = None
    elif underfilled:
        applies = "under-filled GPU" if inputs.terms.underfill else None
    else:
        applies = "tail effect" if inputs.terms.tail else None
    factor = per_sm * sms / blocks if applies else 1.0
    return WholeBlocks(blocks, sms, per_sm, cap, wpb, underfilled, applies, factor)
