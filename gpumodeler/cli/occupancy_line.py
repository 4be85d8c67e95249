"""One launch of ``gpumodeler occupancy`` by the scalar calculator, and one ``--batch`` line
read, checked and answered: the reference answers that :mod:`gpumodeler.cli.cmd_occupancy`
prints and that the vectorised batch path (:mod:`gpumodeler.cli.occupancy_batch`,
:mod:`gpumodeler.cli.occupancy_scan`) must reproduce line for line."""
from __future__ import annotations

import json
from dataclasses import fields

from gpumodeler.core.errors import ModelError

#: the keys a batch line may hold
BATCH_KEYS = {"cc", "block_size", "registers", "shared_mem", "static_shared_mem", "opt_in",
              "carveout_percent", "shared_mem_config"}


def _as_dict(r) -> dict:
    """The occupancy result as a plain dictionary (the JSON answer)."""
    d = {f.name: getattr(r, f.name) for f in fields(r)}
    d["limited_by"] = list(r.limited_by)
    d["block_limits"] = dict(r.block_limits)
    return d


def one_launch(cc, block, regs, smem, static=0, opt_in=False, carveout=None, config=None) -> dict:
    """The scalar calculator's answer for one launch, as the JSON dictionary."""
    from gpumodeler.core.occupancy.calculator import occupancy
    return _as_dict(occupancy(cc, block, regs, smem, static_shared_mem_bytes=static, opt_in=opt_in,
                              carveout_percent=carveout, shared_mem_config_bytes=config))


#: sizes the vectorised calculator takes in a batch; a launch with a larger one (which cannot
#: run: it fails a limit check) is answered by the scalar calculator, whose Python integers
#: do not overflow where int64 products of a size of 2^58 and more would
INT_LIMIT = 1 << 40


def line_output(lineno: int, obj_or_error) -> str:
    """One batch line's answer by the scalar calculator (the reference: every message)."""
    try:
        obj = checked_line(obj_or_error)
        out = one_launch(str(obj["cc"]), obj["block_size"], obj["registers"], obj.get("shared_mem", 0),
                   obj.get("static_shared_mem", 0), obj.get("opt_in", False),
                   obj.get("carveout_percent"), obj.get("shared_mem_config"))
    except (ValueError, ModelError) as exc:  # json errors are ValueErrors too
        out = {"line": lineno, "error": str(exc)}
    return json.dumps(out)


def parsed_line(line: str):
    """The line's object, or the ValueError that reading it gives."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        return ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})")
    except RecursionError:
        return ValueError("JSON nested too deeply; a line is one flat object")
    except ValueError as exc:  # Python's int-string limit: this line alone is wrong
        if "integer string conversion" not in str(exc):
            raise
        return ValueError("a number has more than 4300 digits, more than Python reads; "
                          "sizes are whole numbers of at most 4300 digits")


def checked_line(obj):
    """The line's object if it is a valid launch, else raise ValueError saying what is wrong."""
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
