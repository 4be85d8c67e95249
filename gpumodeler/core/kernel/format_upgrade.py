"""Reading a kernel file written by an older gpumodeler: what changed in the meaning of a
stored value, upgraded on load where the file shows the value was not set by hand.

Version 1 of the format (``docs/kernel-format.md``) stored, for a shared-memory access, the
n of its n-way bank conflict: the most distinct 32-bit words one of the 32 banks held for the
whole warp, over the words an unconflicted access of the warp's bytes needs per bank. Version
2 stores its *wavefronts*, the cycles of the banks it takes, a 64- and 128-bit access served
one half-warp at a time (:func:`gpumodeler.core.kernel.sass.warp_access.shared_wavefronts`; the
choice and its sources are in ``docs/sass-import.md``, "Shared memory: wavefronts"): an
unconflicted ``LDS.128`` is 4, not 1, a row broadcast 2, not 1. For 32-bit and narrower
accesses both rules give the same number, so only ``LDS.64``, ``LDS.128``, ``STS.64`` and
``STS.128`` (``width_bytes`` 8 and 16) can differ.

How a value set by hand is told from one the SASS import wrote: the node keeps the address
the import followed (``address``). Analysed again, it gives what the import wrote then (the
version 1 rule, :func:`legacy_shared_degree`) and what it writes now. A stored value equal
to the old rule's (and not to the new one's) was the import's: it is replaced by the new
one. Any other value was set by hand (or already follows the new rule) and is kept, as
:func:`gpumodeler.core.kernel.sass.launch_shape.shaped_instruction` keeps a hand-set value.
A node without a followed address (drawn by hand, or an address not affine) cannot be told
either way: its value is kept and a note says so. Each change and each value kept undecided
is a note, which the graph holds (``KernelGraph.read_notes``) for the CLI and the editor to
show.

Known limit: a version 1 file written after the wavefront rule came in (the same version
number) whose user set, by hand, exactly the value the old rule gives, has that value
replaced; no field of the file tells those apart.
"""
from __future__ import annotations

import math

#: the version from which a shared-memory access's ``bank_conflict_degree`` is its
#: wavefronts (64- and 128-bit accesses per half-warp)
WAVEFRONT_VERSION = 2
#: widths whose stored degree the two rules disagree on (wider than one 4-byte bank word)
_WIDE = (8, 16)
#: notes listed one per instruction up to this many; the rest are counted in one line
MAX_NOTES = 20


def legacy_shared_degree(addresses, width_bytes: int) -> int:
    """The bank-conflict degree version 1 stored for a warp whose lanes access
    ``width_bytes`` at the given byte addresses: the most distinct 4-byte words any of the
    32 banks holds over the whole warp, over the minimum ``ceil(words / 32)``, rounded up,
    1..32 (the rule before the half-warp wavefronts; kept only to recognise its values)."""
    words = {w for start in addresses
             for w in range(start // 4, (start + max(1, int(width_bytes)) - 1) // 4 + 1)}
    per_bank: dict = {}
    for w in words:
        per_bank[w % 32] = per_bank.get(w % 32, 0) + 1
    minimum = max(1, math.ceil(len(words) / 32))
    return max(1, min(32, math.ceil(max(per_bank.values(), default=1) / minimum)))


def upgraded_degree(address: str, width_bytes: int, stored: int) -> int | None:
    """The degree a wide shared access stored as ``stored`` by the version 1 rule takes now,
    when its ``address`` (text) is one the import followed and ``stored`` is what the import
    wrote for it then (and differs from now); else None (kept as it is)."""
    degrees = _import_degrees(address, width_bytes)
    if degrees is None or stored != degrees[0] or degrees[0] == degrees[1]:
        return None
    return degrees[1]


def _import_degrees(address: str, width_bytes: int):
    """(degree the version 1 import wrote, degree the import writes now) for a wide shared
    access whose address the import followed; None when it has no such address."""
    from gpumodeler.core.kernel.sass.addresses import (PARAM_STRIDE_BYTES, WARP, analyse_address,
                                                       instruction_attributes, parse_address)

    poly = parse_address(address)
    if poly is None:
        return None
    addr = analyse_address(poly, "shared")
    now = instruction_attributes(addr, width_bytes)
    if not addr.affine or "bank_conflict_degree" not in now:
        return None
    stride = PARAM_STRIDE_BYTES if addr.param_stride else addr.lane_stride
    if stride is None:  # pragma: no cover - an affine address has one (see instruction_attributes)
        return None
    if stride == 0:  # version 1 wrote no degree for a broadcast: the default, 1
        before = 1
    else:
        before = legacy_shared_degree([addr.offset + lane * abs(int(stride))
                                       for lane in range(WARP)], width_bytes)
    return before, now["bank_conflict_degree"]


def wide_shared_ids(graph) -> list:
    """The ids of the graph's shared-memory accesses of 8 or 16 bytes, in program order (read
    as columns: a graph read from a file makes no instruction object for it)."""
    from gpumodeler.core.kernel.item_table import columns

    ids, units, spaces, widths = columns(graph.instructions,
                                         ("id", "unit", "space", "width_bytes"))
    return [nid for nid, unit, space, width in zip(ids, units, spaces, widths)
            if unit == "ldst" and space == "shared" and width in _WIDE]


def upgrade_shared_degrees(graph) -> list:
    """Upgrade, in place, the ``bank_conflict_degree`` of ``graph``'s 64- and 128-bit
    shared-memory accesses from a version 1 file (see the module docstring); returns the
    notes (one line each: what changed, what was kept undecided)."""
    changed, undecided = [], []
    for nid in wide_shared_ids(graph):
        ins = graph.instructions[nid]
        if _import_degrees(ins.address, ins.width_bytes) is None:
            undecided.append(ins)
            continue
        now = upgraded_degree(ins.address, ins.width_bytes, ins.bank_conflict_degree)
        if now is not None:
            graph.update_instruction(nid, bank_conflict_degree=now)
            changed.append((ins, now))
    notes = [f"{ins.id} ({ins.opcode}): bank conflict degree {ins.bank_conflict_degree} -> {now} "
             f"(the file predates counting a {8 * ins.width_bytes}-bit shared access's "
             f"wavefronts per half-warp; the value was the import's)"
             for ins, now in changed]
    notes += [f"{ins.id} ({ins.opcode}): bank conflict degree {ins.bank_conflict_degree} kept "
              f"as written: the file predates counting a {8 * ins.width_bytes}-bit shared "
              f"access's wavefronts per half-warp (an unconflicted one takes "
              f"{_ideal(ins.width_bytes)}), and with no address the import followed it cannot "
              f"be told whether it was set by hand; check it"
              for ins in undecided]
    if len(notes) > MAX_NOTES:
        notes = notes[:MAX_NOTES] + [f"... and {len(notes) - MAX_NOTES} more such notes"]
    return notes


def _ideal(width_bytes: int) -> int:
    from gpumodeler.core.kernel.sass.addresses import ideal_wavefronts
    return ideal_wavefronts(width_bytes)
