"""The LaunchError messages of many launches at once, a column at a time.

The texts are the ``%`` templates of :mod:`gpumodeler.core.occupancy.messages`, which the
scalar calculator fills for one launch; here each template is filled for a whole column of
launches that failed the same check (one ``%`` per launch, the numbers computed as arrays),
so a sweep or a JSON Lines batch with many launches that cannot run does not format each
message through the scalar code. The arithmetic is that of the scalar messages (sources and
symbols in :mod:`gpumodeler.core.occupancy.calculator`); ``tests/core/test_occupancy_messages.py``
compares every message with the scalar one.
"""
from __future__ import annotations

import re
from typing import Callable

import numpy as np

from gpumodeler.core.occupancy import messages as m
from gpumodeler.core.occupancy.checks import (
    CHECK_BLOCK_SIZE, CHECK_NO_BLOCK_FITS, CHECK_OK, CHECK_REGISTERS_PER_BLOCK,
    CHECK_REGISTERS_PER_THREAD, CHECK_SHARED_PER_BLOCK, CHECK_STATIC_SHARED, LIMIT_NAMES)
from gpumodeler.core.occupancy.compute_capability import ArchitectureLimits, architecture


_CONVERSION = re.compile(r"%[ds]")


def _fill(template: str, *columns) -> list:
    """One part (see :func:`launch_error_parts`) for every row: the template, with the
    columns that are one value for every row written in, and the other columns (int64
    arrays or lists) as lists."""
    pieces = _CONVERSION.split(template)
    specs = _CONVERSION.findall(template)
    baked, rows = [pieces[0]], []
    for spec, column, piece in zip(specs, columns, pieces[1:]):
        if isinstance(column, np.ndarray):
            rows.append(column.tolist())
        elif isinstance(column, list):
            rows.append(column)
        else:
            baked.append((spec % column).replace("%", "%%"))
            baked.append(piece)
            continue
        baked.append(spec)
        baked.append(piece)
    return [(None, "".join(baked), rows)]


def _by_mask(mask: np.ndarray, when_true, when_false) -> list:
    """The parts of ``when_true(rows)`` where ``mask`` holds and of ``when_false(rows)``
    elsewhere (each called only if it has rows)."""
    if mask.all():
        return when_true(np.flatnonzero(mask))
    if not mask.any():
        return when_false(np.flatnonzero(~mask))
    parts = []
    for rows, make in ((np.flatnonzero(mask), when_true), (np.flatnonzero(~mask), when_false)):
        parts += [(rows if sub is None else rows[sub], template, columns)
                  for sub, template, columns in make(rows)]
    return parts


def render(parts: list, n: int) -> list[str]:
    """The ``n`` texts that ``parts`` describe, in row order."""
    if len(parts) == 1 and parts[0][0] is None:
        _, template, columns = parts[0]
        return list(map(template.__mod__, zip(*columns)))
    out = np.empty(n, dtype=object)
    for rows, template, columns in parts:
        texts = np.empty(len(rows), dtype=object)
        texts[:] = list(map(template.__mod__, zip(*columns)))
        out[rows] = texts
    return out.tolist()


def _notes(warps: np.ndarray, note) -> list[str]:
    """``note(w)`` for each row's warp count, formatted once per distinct count."""
    values = warps.tolist()
    table = {w: note(w) for w in set(values)}
    return list(map(table.__getitem__, values))


def _block_size(arch: ArchitectureLimits, b: np.ndarray) -> list:
    limit = arch.max_threads_per_block
    return _by_mask(b < 1, lambda k: _fill(m.BLOCK_SIZE_BELOW_TEXT, b[k]),
                    lambda k: _fill(m.BLOCK_SIZE_OVER_TEXT, b[k], limit, b[k] - limit))


def _registers_per_thread(arch: ArchitectureLimits, r: np.ndarray) -> list:
    limit = arch.max_registers_per_thread
    return _fill(m.REGISTERS_PER_THREAD_TEXT, r, limit, r - limit)


def _static_shared(arch: ArchitectureLimits, s: np.ndarray) -> list:
    limit = arch.shared_mem_per_block_bytes
    return _fill(m.STATIC_SHARED_TEXT, s, m.kb_text(limit), s - limit, m.static_shared_ending(arch))


def _shared_per_block(arch: ArchitectureLimits, s: np.ndarray, d: np.ndarray,
                      opt_in: bool) -> list:
    total = s + d
    cc = arch.compute_capability
    optin = arch.shared_mem_per_block_optin_bytes
    default = arch.shared_mem_per_block_bytes
    used = (total, s, d)
    if opt_in and optin > default:
        return _fill(m.SHARED_USED_TEXT + m.SHARED_OPTIN_TEXT, *used, m.kb_text(optin), cc,
                     total - optin)
    head = m.SHARED_USED_TEXT + m.SHARED_DEFAULT_TEXT
    if optin <= default:
        return _fill(head + m.SHARED_NO_OPTIN_TEXT, *used, m.kb_text(default), total - default,
                     m.tesla_note(arch), cc)
    return _by_mask(
        total <= optin,
        lambda k: _fill(head + m.SHARED_WITHIN_OPTIN_TEXT, total[k], s[k], d[k],
                        m.kb_text(default), total[k] - default, cc, m.kb_text(optin)),
        lambda k: _fill(head + m.SHARED_OVER_OPTIN_TEXT, total[k], s[k], d[k],
                        m.kb_text(default), total[k] - default, m.kb_text(optin), cc, total[k] - optin))


def _registers_per_block(arch: ArchitectureLimits, b: np.ndarray, r: np.ndarray) -> list:
    template, warps, counted, factor, unit, need = m.registers_per_block_numbers(arch, b, r)
    limit = arch.max_registers_per_block
    return _fill(template, counted, _notes(warps, lambda w: m.rounding_note(arch, w)), factor, r,
                 unit, need, limit, arch.compute_capability, need - limit)


def _no_block_fits(zero: dict) -> list:
    code = np.zeros(len(zero[LIMIT_NAMES[0]]), dtype=np.int64)
    for k, name in enumerate(LIMIT_NAMES):
        code |= np.asarray(zero[name], dtype=np.int64) << k
    values = code.tolist()
    table = {c: m.NO_BLOCK_FITS_TEXT % m.zero_limit_names(
        {name: bool(c >> k & 1) for k, name in enumerate(LIMIT_NAMES)}) for c in set(values)}
    return [(None, "%s", [list(map(table.__getitem__, values))])]


def launch_error_parts(arch: ArchitectureLimits, code: int, block_size: np.ndarray,
                       registers: np.ndarray, static: np.ndarray, dynamic: np.ndarray,
                       opt_in: bool, zero_limits: dict | None = None) -> list:
    """The messages of the launches (1-D int64 columns, one row per launch) that failed the
    check ``code`` (:mod:`gpumodeler.core.occupancy.array_rules`), as the scalar calculator
    words them, before they are formatted: a list of parts ``(rows, template, columns)``,
    where ``template % row`` for each row of the columns (lists) is the message of the
    launches ``rows`` (an index array; None: every launch, in order). A caller can so put
    each message inside its own line with one ``%`` (``occupancy --batch``).
    ``zero_limits`` (limit name -> bool column: that limit allows 0 blocks) is needed for
    the last check only."""
    if code == CHECK_NO_BLOCK_FITS:
        if zero_limits is None:
            raise ValueError("the no-block-fits messages need zero_limits")
        return _no_block_fits(zero_limits)
    if code not in _PARTS:
        raise ValueError(f"no launch check has code {code}")
    columns = {"block_size": block_size, "registers": registers, "static": static,
               "dynamic": dynamic, "opt_in": opt_in}
    return _PARTS[code](arch, *(columns[name] for name in m.MESSAGE_INPUTS[code]))


# check code -> the parts of a column of launches (the scalar messages, a column at a time)
_PARTS: dict[int, Callable[..., list]] = {CHECK_BLOCK_SIZE: _block_size, CHECK_REGISTERS_PER_THREAD: _registers_per_thread,
          CHECK_STATIC_SHARED: _static_shared, CHECK_SHARED_PER_BLOCK: _shared_per_block,
          CHECK_REGISTERS_PER_BLOCK: _registers_per_block}


def launch_error_messages(arch: ArchitectureLimits, code: int, block_size: np.ndarray,
                          registers: np.ndarray, static: np.ndarray, dynamic: np.ndarray,
                          opt_in: bool, zero_limits: dict | None = None) -> list[str]:
    """The message of each launch of :func:`launch_error_parts`, in row order."""
    return render(launch_error_parts(arch, code, block_size, registers, static, dynamic,
                                     opt_in, zero_limits), len(block_size))


def reason_parts(arrays, index: np.ndarray) -> list:
    """The LaunchError messages of the launches at ``index`` (flat indices into a result of
    :func:`~gpumodeler.core.occupancy.arrays.occupancy_array`, launches that cannot run) as
    parts ``(positions, template, columns)``: ``template % row`` is the message of the
    launch ``index[positions[i]]``, row i of the columns (see :func:`launch_error_parts`)."""
    arch = architecture(arrays.compute_capability)

    def at(a):
        return np.broadcast_to(a, arrays.shape).ravel()[index]

    failure = at(arrays.failure)
    if (failure == CHECK_OK).any():
        raise ValueError("every launch asked for must be one that cannot run")
    b, r, s, d = (at(c) for c in (arrays.block_size, arrays.registers_per_thread,
                                  arrays.static_shared_mem_bytes, arrays.shared_mem_bytes))
    parts = []
    for code in np.flatnonzero(np.bincount(failure)).tolist():
        chosen = np.flatnonzero(failure == code)
        zero = None
        if code == CHECK_NO_BLOCK_FITS:
            zero = {k: at(v)[chosen] == 0 for k, v in arrays.block_limits.items()}
        parts += [(chosen if rows is None else chosen[rows], template, columns)
                  for rows, template, columns in launch_error_parts(
                      arch, code, b[chosen], r[chosen], s[chosen], d[chosen], arrays.opt_in,
                      zero)]
    return parts
