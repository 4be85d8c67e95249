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
