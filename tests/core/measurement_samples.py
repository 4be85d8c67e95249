"""Shared helpers for the measurement tests: the sample files and edited copies of them."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "resources" / "measurements"
TRACE = SAMPLES / "nvprof-gpu-trace-multirun.csv"
METRICS = SAMPLES / "nvprof-metrics-saxpy2.csv"
NCU_RAW = SAMPLES / "ncu-raw.csv"
NCU_DETAILS = SAMPLES / "ncu-details.csv"
TIMINGS = SAMPLES / "timings.csv"


def text(path) -> str:
    return Path(path).read_text(encoding="utf-8")


def edited(path, row: int, old: str, new: str) -> str:
    """The file's text with ``old`` replaced by ``new`` on 1-based line ``row`` (which must
    contain it, so a test cannot silently edit nothing)."""
    lines = text(path).splitlines()
    assert old in lines[row - 1], f"row {row} of {Path(path).name} has no {old!r}: {lines[row - 1]}"
    lines[row - 1] = lines[row - 1].replace(old, new, 1)
    return "\n".join(lines) + "\n"


#: numbers whose text takes the readers off their common path or onto its edges: negative
#: zero, exponents, many digits, whole numbers with and without a point, beyond a float
ODD_NUMBERS = ["-0.000000", "0.000000", "2.441406e-03", "1E2", "4096", "4096.0",
               "1.00000000000000000000000000000000001", "0.30000000000000004", "7.1288354e-05",
               "123456789012.5", "5e-324", "1e308", "1e999", "-1e999", "-1.5"]


def distinct_trace(rows: int, seed: int, odd: bool = True) -> str:
    """An nvprof GPU trace (the sample's header and unit rows) whose numbers differ from row
    to row, in two tables of other units (the second: sizes in MB, times in ms), with one
    of :data:`ODD_NUMBERS` in a random numeric cell of every fourth row when ``odd``."""
    import random
    rng = random.Random(seed)
    head = text(TRACE).splitlines()[:5]
    header, units = head[3], head[4]
    out = head[:]
    for k in range(rows):
        if k == rows // 2:
            out += ["", header, units.replace("us,us", "ms,ms").replace("KB,GB/s", "MB,GB/s")]
        if k % 3 == 0:
            cells = [f"{rng.uniform(0, 1e4):.6f}", f"{rng.uniform(0.5, 5e3):.6f}",
                     str(rng.randint(1, 65535)), str(rng.randint(1, 64)), "1",
                     str(rng.choice((32, 256, 1024))), "1", "1", str(rng.randint(8, 255)),
                     f"{rng.randint(0, 48):.6f}", f"{rng.uniform(0, 4):.6f}", "", "", "", "",
                     "GeForce GTX 970 (0)", "1", "7", '"saxpy2(int, float, float const *, '
                     'float*, int)"', str(k)]
        else:
            size = rng.choice((rng.uniform(1, 1e6), float(rng.randint(1, 4096))))
            name, src, dst = rng.choice((("HtoD", "Pageable", "Device"),
                                         ("DtoH", "Device", "Pinned"),
                                         ("DtoD", "Device", "Device")))
            cells = [f"{rng.uniform(0, 1e4):.6f}", f"{rng.uniform(1.5, 5e4):.6f}", "", "", "",
                     "", "", "", "", "", "",
                     rng.choice((f"{size:.6f}", f"{size:.6e}", f"{size:.0f}", f"{size!r}")),
                     f"{rng.uniform(0.01, 12):.6f}", src, dst, "GeForce GTX 970 (0)", "1",
                     "7", f"[CUDA memcpy {name}]", str(k)]
        if odd and k % 4 == 1:
            numeric = [j for j, c in enumerate(cells) if c[:1].isdigit()]
            cells[rng.choice(numeric)] = rng.choice(ODD_NUMBERS)
        out.append(",".join(cells))
    return "\n".join(out) + "\n"


def distinct_timings(rows: int, seed: int, odd: bool = True) -> str:
    """A timings CSV (the sample's columns) whose numbers differ from row to row, one size
    written in several units (B, kB, KiB, MiB), times and energies with exponents, and one
    of :data:`ODD_NUMBERS` in a random numeric cell of every fourth row when ``odd``."""
    import random
    rng = random.Random(seed)
    out = [text(TIMINGS).splitlines()[1]]
    for k in range(rows):
        if k % 3 == 0:
            cells = ["kernel", rng.choice(("saxpy2", "stencil")), "", "", "",
                     str(rng.randint(1, 65535)), str(rng.choice((32, 256, 1024))),
                     f"{rng.uniform(0.5, 5e3):.6g}", rng.choice(("us", "ms", "ns", "s")),
                     "GeForce GTX 970", "", str(rng.randint(8, 255)),
                     rng.choice((f"{rng.uniform(0, 1):.6g}", f"{rng.uniform(0, 1):.3e}", ""))]
        else:
            direction, memory = rng.choice((("htod", "pageable"), ("dtoh", "pinned"),
                                            ("dtod", "device")))
            nbytes = rng.randint(1, 2 ** 30)
            size, unit = rng.choice(((str(nbytes), "B"), (repr(nbytes / 1000), "kB"),
                                     (repr(nbytes / 1024), "KiB"), (f"{nbytes / 2**20:.9g}",
                                                                     "MiB")))
            cells = ["transfer", f"{direction} copy", direction, size, unit, "", "",
                     f"{rng.uniform(1.5, 5e4):.6g}", "us", "GeForce GTX 970", memory, "", ""]
        if odd and k % 4 == 1:
            numeric = [j for j, c in enumerate(cells) if c[:1].isdigit()]
            cells[rng.choice(numeric)] = rng.choice(ODD_NUMBERS)
        out.append(",".join(cells))
    return "\n".join(out) + "\n"
