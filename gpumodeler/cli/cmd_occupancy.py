"""`gpumodeler occupancy`: NVIDIA's occupancy rules, one launch or a JSON Lines batch."""
from __future__ import annotations

import sys

from . import common
from .main import CLIError
from .occupancy_line import BATCH_KEYS, one_launch  # noqa: F401  (BATCH_KEYS re-exported)


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


#: batch lines evaluated together
BATCH_CHUNK = 65536


def _batch(path: str) -> int:
    """JSON Lines in, one answer line per non-blank line out, in order, evaluated in chunks
    of :data:`BATCH_CHUNK` lines (:mod:`gpumodeler.cli.occupancy_batch`)."""
    from .occupancy_batch import answer_stream  # lazy: numpy only for a batch

    try:
        stream = sys.stdin if path == "-" else open(path, encoding="utf-8")
    except OSError as exc:
        raise CLIError(f"cannot read {path}: {exc.strerror}") from None
    with stream:
        try:
            answer_stream(stream, BATCH_CHUNK, sys.stdout.write)
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
    from gpumodeler.core.launch_limits import check_launch
    check_launch(block_size=args.block_size, compute_capability=cc)
    r = one_launch(cc, args.block_size, args.registers, int(args.shared_mem), int(args.static_shared_mem),
             args.opt_in, args.carveout)
    common.require_finite(r)
    if args.json:
        common.print_json(r, checked=True)
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
