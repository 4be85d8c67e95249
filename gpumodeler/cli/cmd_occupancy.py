"""`gpumodeler occupancy`: NVIDIA's occupancy rules, one launch or a JSON Lines batch."""
from __future__ import annotations

import json
import sys
from dataclasses import fields

from gpumodeler.core.errors import ModelError

from . import common
from .main import CLIError

BATCH_KEYS = {"cc", "block_size", "registers", "shared_mem", "static_shared_mem", "opt_in",
              "carveout_percent", "shared_mem_config"}


def register(sub) -> None:
    p = sub.add_parser("occupancy", help="active blocks and warps per SM for a launch",
                       description="Occupancy by NVIDIA's rules (registers, shared memory, "
                                   "warps and blocks per SM, allocation granularities).")
    p.add_argument("--cc", help="compute capability, e.g. 5.2")
    p.add_argument("--device", metavar="NAME", help="take the compute capability from the device database")
    p.add_argument("--block-size", type=common.int_arg, help="threads per block")
    p.add_argument("--registers", type=common.int_arg, help="registers per thread")
    p.add_argument("--shared-mem", type=common.bytes_arg, default=0.0,
                   help="dynamic shared memory per block, bytes")
    p.add_argument("--static-shared-mem", type=common.bytes_arg, default=0.0,
                   help="static shared memory per block, bytes")
    p.add_argument("--opt-in", action="store_true",
                   help="kernel opted in to the maximum dynamic shared memory per block")
    p.add_argument("--carveout", type=common.int_arg, metavar="PERCENT",
                   help="preferred shared-memory carveout, percent of the maximum")
    p.add_argument("--batch", metavar="FILE",
                   help="JSON Lines with cc, block_size, registers, shared_mem ('-' for stdin)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run)


def _as_dict(r) -> dict:
    d = {f.name: getattr(r, f.name) for f in fields(r)}
    d["limited_by"] = list(r.limited_by)
    d["block_limits"] = dict(r.block_limits)
    return d


def _one(cc, block, regs, smem, static=0, opt_in=False, carveout=None, config=None) -> dict:
    from gpumodeler.core.occupancy.calculator import occupancy
    return _as_dict(occupancy(cc, block, regs, smem, static_shared_mem_bytes=static, opt_in=opt_in,
                              carveout_percent=carveout, shared_mem_config_bytes=config))


#: batch lines evaluated together
BATCH_CHUNK = 8192
_INT_LIMIT = 1 << 62


def _line_output(lineno: int, obj_or_error) -> str:
    """One batch line's answer by the scalar calculator (the reference: every message)."""
    try:
        obj = _checked_line(obj_or_error)
        out = _one(str(obj["cc"]), obj["block_size"], obj["registers"], obj.get("shared_mem", 0),
                   obj.get("static_shared_mem", 0), obj.get("opt_in", False),
                   obj.get("carveout_percent"), obj.get("shared_mem_config"))
    except (ValueError, ModelError) as exc:  # json errors are ValueErrors too
        out = {"line": lineno, "error": str(exc)}
    return json.dumps(out)


def _parsed(line: str):
    """The line's object, or the ValueError that reading it gives."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        return ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})")
    except RecursionError:
        return ValueError("JSON nested too deeply; a line is one flat object")


def _checked_line(obj):
    if isinstance(obj, ValueError):
        raise obj
    if not isinstance(obj, dict):
        raise ValueError("a line must be a JSON object")
    unknown = sorted(set(obj) - BATCH_KEYS)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(BATCH_KEYS))}")
    missing = [k for k in ("cc", "block_size", "registers") if k not in obj]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    return obj


def _vector_key(obj):
    """(cc, opt_in, carveout, config) and the four sizes when the line can go through the
    vectorised calculator unchanged (plain non-negative integers...), else None."""
    if type(obj) is not dict or not obj.keys() <= BATCH_KEYS:
        return None
    try:
        sizes = (obj["block_size"], obj["registers"], obj.get("shared_mem", 0),
                 obj.get("static_shared_mem", 0))
        cc = obj["cc"]
    except KeyError:
        return None
    for v in sizes:
        if type(v) is not int or not 0 <= v < _INT_LIMIT:
            return None
    opt_in, carveout, config = (obj.get("opt_in", False), obj.get("carveout_percent"),
                                obj.get("shared_mem_config"))
    if type(opt_in) is not bool or not (carveout is None or type(carveout) is int) \
            or not (config is None or type(config) is int):
        return None
    return (cc if type(cc) is str else str(cc), opt_in, carveout, config), sizes


def _group_outputs(key, rows, out: list) -> None:
    """Answers for lines sharing (cc, options): one vectorised call; a line that cannot run,
    or a group the calculator refuses as a whole, gets the scalar path's answer."""
    import numpy as np

    from gpumodeler.core.occupancy.calculator import LIMIT_NAMES, occupancy_array

    positions = [r[0] for r in rows]
    cc, opt_in, carveout, config = key
    sizes = np.array([r[2] for r in rows], dtype=np.int64)
    try:
        arrays = occupancy_array(cc, sizes[:, 0], sizes[:, 1], sizes[:, 2],
                                 static_shared_mem_bytes=sizes[:, 3], opt_in=opt_in,
                                 carveout_percent=carveout, shared_mem_config_bytes=config)
    except (ValueError, ModelError):
        arrays = None
    if arrays is None:
        for pos, lineno, _, obj in rows:
            out[pos] = _line_output(lineno, obj)
        return
    valid = arrays.valid
    bad = np.flatnonzero(~valid)
    if bad.size:  # the scalar calculator's LaunchError messages, each formatted once
        reasons = arrays.reasons[bad].tolist()
        texts = {r: json.dumps(r) for r in set(reasons)}
        for i, reason in zip(bad.tolist(), reasons):
            out[positions[i]] = f'{{"line": {rows[i][1]}, "error": {texts[reason]}}}'
    ok = np.flatnonzero(valid)
    if not ok.size:
        return
    first = int(ok[0])
    reference = _one(cc, *rows[first][2][:3], rows[first][2][3], opt_in, carveout, config)
    template, columns = _template(reference, arrays, ok, LIMIT_NAMES)
    texts = [template % row for row in zip(*columns)]
    if texts[0] != json.dumps(reference):  # pragma: no cover - a guard, never seen
        for i in ok.tolist():
            out[positions[i]] = _line_output(rows[i][1], rows[i][3])
        return
    for i, text in zip(ok.tolist(), texts):
        out[positions[i]] = text


def _template(reference: dict, arrays, ok, limit_names):
    """A %-template of one answer line (keys in the scalar answer's order) and the columns
    of cell texts that fill it, taken from the vectorised result at ``ok``."""
    import numpy as np

    from .tables import distinct_texts

    parts, columns = [], []
    n = ok.size
    for name, value in reference.items():
        key = json.dumps(name).replace("%", "%%")
        if name == "block_limits":
            inner = []
            for limit in value:
                inner.append(f"{json.dumps(limit)}: %s")
                columns.append(distinct_texts(arrays.block_limits[limit][ok], str))
            parts.append(f"{key}: {{{', '.join(inner)}}}")
            continue
        parts.append(f"{key}: %s")
        if name == "limited_by":
            code = np.zeros(n, dtype=np.int64)
            for k, limit in enumerate(limit_names):
                code |= arrays.limited_by[limit][ok].astype(np.int64) << k
            text = {c: json.dumps([l for k, l in enumerate(limit_names) if c >> k & 1])
                    for c in set(code.tolist())}
            columns.append([text[c] for c in code.tolist()])
            continue
        column = getattr(arrays, name)
        if np.ndim(column) == 0:  # the same for every launch of the group
            columns.append([json.dumps(value)] * n)
        elif column.dtype.kind == "b":
            columns.append(["true" if v else "false" for v in column[ok].tolist()])
        elif column.dtype.kind == "f":
            columns.append(distinct_texts(column[ok], repr))
        else:
            columns.append(distinct_texts(column[ok], str))
    return "{" + ", ".join(parts) + "}", columns


def _batch(path: str) -> int:
    """JSON Lines in, one answer line per non-blank line out, in order, evaluated in chunks
    of :data:`BATCH_CHUNK` lines grouped by (cc, options) for the vectorised calculator."""
    import itertools

    try:
        stream = sys.stdin if path == "-" else open(path, encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror}") from None
    scan = json.JSONDecoder().scan_once
    with stream:
        try:
            numbered = ((n, line) for n, line in enumerate(stream, 1) if line.strip())
            while True:
                chunk = list(itertools.islice(numbered, BATCH_CHUNK))
                if not chunk:
                    break
                out: list = [None] * len(chunk)
                groups: dict = {}
                for pos, (lineno, line) in enumerate(chunk):
                    try:  # json.loads without its Python layers; anything unusual goes through it
                        obj, end = scan(line, 0)
                        if end != len(line) and line[end:].strip(" \t\n\r"):
                            obj = _parsed(line)
                    except (StopIteration, ValueError, RecursionError):
                        obj = _parsed(line)
                    vk = _vector_key(obj)
                    if vk is None:
                        out[pos] = _line_output(lineno, obj)
                    else:
                        group = groups.get(vk[0])
                        if group is None:
                            group = groups[vk[0]] = []
                        group.append((pos, lineno, vk[1], obj))
                for key, rows in groups.items():
                    _group_outputs(key, rows, out)
                sys.stdout.write("\n".join(out) + "\n")
        except UnicodeDecodeError:
            raise CLIError(f"{path} is not a text file (expected JSON Lines, one launch per "
                           f"line, e.g. {{\"cc\": \"8.0\", \"block_size\": 256, "
                           f"\"registers\": 32}})") from None
    return 0


def run(args) -> int:
    if args.batch:
        return _batch(args.batch)
    cc = args.cc
    if args.device:
        spec = common.open_catalog().get(args.device).to_gpu_spec()
        cc = cc or spec.compute_capability
        if not cc:
            raise CLIError(f"the compute capability of {spec.name} is unknown; give --cc")
    missing = [f for f, v in (("--cc or --device", cc), ("--block-size", args.block_size),
                              ("--registers", args.registers)) if v is None]
    if missing:
        raise CLIError(f"give {', '.join(missing)} (or --batch FILE)")
    for name, v in (("--shared-mem", args.shared_mem), ("--static-shared-mem", args.static_shared_mem)):
        if not float(v).is_integer():
            raise CLIError(f"{name} must be a whole number of bytes, got {v}")
    r = _one(cc, args.block_size, args.registers, int(args.shared_mem), int(args.static_shared_mem),
             args.opt_in, args.carveout)
    if args.json:
        common.print_json(r)
        return 0
    print(f"compute capability {r['compute_capability']}, block {r['block_size']} threads, "
          f"{r['registers_per_thread']} registers/thread, "
          f"{r['shared_mem_bytes'] + r['static_shared_mem_bytes']} B shared memory/block")
    print(f"active blocks per SM   {r['active_blocks_per_sm']}")
    print(f"active warps per SM    {r['active_warps_per_sm']} of {r['max_warps_per_sm']}")
    print(f"active threads per SM  {r['active_threads_per_sm']}")
    print(f"occupancy              {r['occupancy'] * 100:.4g} %")
    limits = ", ".join(f"{k} {v if v < 2**31 - 1 else 'no limit'}" for k, v in r["block_limits"].items())
    print(f"blocks per SM allowed  {limits}")
    print(f"limited by             {', '.join(r['limited_by'])}")
    print(f"allocated per block    {r['allocated_registers_per_block']} registers, "
          f"{r['allocated_shared_mem_per_block_bytes']} B shared memory "
          f"(shared-memory configuration {r['shared_mem_config_bytes']} B/SM)")
    return 0
