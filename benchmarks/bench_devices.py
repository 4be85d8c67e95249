"""Speed of the device catalog on a large database: list, search, lookup, import report,
merge, diff and export.

    python benchmarks/bench_devices.py [--devices 10000] [--repeat 3]

Generates a database A of N realistic devices (~30 fields each, some with two disagreeing
records) and times list, search and lookup. Then merges into a fresh copy of A, each
scenario's file B in turn (import report, merge and diff each run --repeat times):

- B identical to A: what a merge of N devices costs when nothing changed;
- B = A with 1% of the devices edited (a colleague re-measured some GPUs);
- B = A with 10% of the devices edited, and B = A with 10% of all values changed spread
  over every device: some 26 000 changed values, the cost per changed value;
- B = A merged into an empty user database: N new devices, copied whole.

Half of the changed values are added records (taken by themselves), half replaced values
(conflicts, resolved as "both"). Then exports of 10% and of all devices. One line per
measurement; the goal is well under a second for a database of 10 000 devices.

The target rows (merge 10% edited / spread / into empty, diff, export all) each carry a
verdict against their target of 1 s, judged on the best CPU time of this process (on a shared
machine the wall time also counts other programs; it is printed too). The script ends with
status 1 when one of them is missed, so that `make bench` reports it.
"""
from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpumodeler.db.catalog import Catalog, diff  # noqa: E402
from gpumodeler.db.fields import FIELDS  # noqa: E402
from gpumodeler.db.schema import create_database  # noqa: E402
from gpumodeler.db.store import RawDevice, write_device, write_sources  # noqa: E402

ARCHS = [("Fermi", "2.0"), ("Kepler", "3.5"), ("Maxwell", "5.2"), ("Pascal", "6.1"),
         ("Volta", "7.0"), ("Turing", "7.5"), ("Ampere", "8.6"), ("Ada", "8.9"),
         ("Hopper", "9.0")]
TEXT = {"vendor": "NVIDIA", "memory_type": "GDDR6", "latency_table": "maxwell-volkov"}


def _record(value, unit, source, where, default=True):
    return (value, unit, source, where, "document", None, default, None)


def generate_device(i: int, rng: random.Random) -> RawDevice:
    arch, cc = ARCHS[i % len(ARCHS)]
    values = {}
    gpu_fields = list(FIELDS["gpu"].items())
    for field_name, unit in gpu_fields[:30]:
        if field_name == "architecture":
            value = arch
        elif field_name == "compute_capability":
            value = cc
        elif unit == "text":
            value = TEXT.get(field_name, f"{field_name}-{i % 7}")
        elif unit in ("count", "bit", "year"):
            value = rng.randint(1, 4096)
        else:
            value = rng.uniform(1, 1e10)
        records = [_record(value, unit, f"doc-{i % 50}", f"Table {i % 9}.{rng.randint(1, 9)}")]
        if field_name == "sm_clock_hz":
            records.append(_record(value * 0.94, unit, "nvidia-spec", "boost clock", False))
        values[field_name] = records
    return RawDevice("gpu", f"Synthetic {arch} GPU {i:05d}", (f"syn{i}",), arch, "user",
                     values, "2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z")


def write_database(path: Path, devices) -> None:
    db = create_database(path)
    with db.atomic():
        write_sources(db, {f"doc-{k}": f"Paper {k}" for k in range(50)} |
                      {"nvidia-spec": "NVIDIA specifications"})
        for n, device in enumerate(devices, 1):
            write_device(db, device, device_id=n)
    db.close()


def changed_copy(devices, fraction: float, rng: random.Random, per_device: bool):
    """The devices with ``fraction`` of their values changed, half by an added measurement
    record (merges by itself), half replaced in place (a conflict). ``per_device``: the
    changes fall on ``fraction`` of the devices (a colleague re-measured some GPUs) instead
    of being spread over all of them (then almost every device differs)."""
    out, added, replaced = [], 0, 0
    for device in devices:
        values = {f: list(rs) for f, rs in device.values.items()}
        touched = rng.random() < fraction if per_device else True
        for field_name, records in values.items():
            if not touched or records[0][1] == "text" or (
                    not per_device and rng.random() >= fraction):
                continue
            new_value = records[0][0] * 1.05
            if rng.random() < 0.5:
                values[field_name] = [r[:6] + (False,) + r[7:] for r in records] + [
                    (new_value, records[0][1], None, None, "measurement", None, True, "bench")]
                added += 1
            else:
                values[field_name] = [(new_value,) + records[0][1:]] + records[1:]
                replaced += 1
        out.append(RawDevice(device.kind, device.name, device.aliases, device.family,
                             device.origin, values, device.created, device.modified))
    return out, added, replaced


def timed(label: str, fn):
    start = time.perf_counter()
    result = fn()
    print(f"{label}: {time.perf_counter() - start:.3f} s", flush=True)
    return result


TARGET_S = 1.0
VERDICTS: list[tuple[str, float, bool]] = []   # (row, best CPU seconds, met)


def timed_runs(label: str, fn, repeat: int, before=None, row: str | None = None):
    """Run ``fn`` ``repeat`` times (``before()`` untimed first) and print every wall time,
    the best and the median, and the best and median CPU time of this process (on a shared
    machine the wall time also counts the time other programs had the processor).
    ``row``: the target row this is, judged against TARGET_S by its best CPU time."""
    times, cpu, result = [], [], None
    for _ in range(repeat):
        if before is not None:
            before()
        # The previous run's result (a merge report of 27 000 changed fields) is let go
        # here, untimed: assigning the new one over it would free it inside the timing.
        result = None
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    print(f"{label}: {' '.join(f'{t:.3f}' for t in times)} s (best {min(times):.3f}, "
          f"median {statistics.median(times):.3f}; cpu best {min(cpu):.3f}, "
          f"median {statistics.median(cpu):.3f})" + _verdict(row, min(cpu)), flush=True)
    return result


def _verdict(row: str | None, best_cpu: float) -> str:
    if row is None:
        return ""
    met = best_cpu < TARGET_S
    VERDICTS.append((row, best_cpu, met))
    return (f"; target < {TARGET_S:g} s: {best_cpu / TARGET_S:.2f}x of it, "
            f"{'ok' if met else 'MISSED'}")


def _merge_scenario(tmp: Path, label: str, theirs: Path, mine: Path | None, repeat: int,
                    with_diff: bool = True, row: str | None = None) -> None:
    """Import report, merge (into a fresh copy of ``mine``, or a new empty user database
    when None) and diff of ``theirs``. ``row``: the target's name of the scenario, when its
    merge and diff are rows of the targets' table."""
    print(label, flush=True)

    def fresh_mine():
        (tmp / "mine.db").unlink(missing_ok=True)
        if mine is None:
            create_database(tmp / "mine.db").close()
        else:
            shutil.copy(mine, tmp / "mine.db")
    fresh_mine()
    with Catalog(user_db=tmp / "mine.db", use_shipped=False) as catalog:
        report = timed_runs("  import report (compare, no write)",
                            lambda: catalog.import_file(theirs), repeat)
    counts = report.counts()
    print(f"    ({counts['new']} new, {counts['changed']} changed, {counts['conflicting']} "
          f"conflicting, {counts['identical']} identical devices; "
          f"{sum(len(d.fields) for d in report.devices)} changed fields, "
          f"{len(report.conflicts)} conflicts)", flush=True)
    catalogs = []

    def open_fresh():
        for old in catalogs:
            old.close()
        fresh_mine()
        catalogs[:] = [Catalog(user_db=tmp / "mine.db", use_shipped=False)]
    timed_runs("  merge (conflicts resolved as 'both', one transaction)",
               lambda: catalogs[0].merge(theirs, policy="both"), repeat, before=open_fresh,
               row=row and f"merge {row}")
    for old in catalogs:
        old.close()
    if with_diff and mine is not None:
        timed_runs("  diff (two files)", lambda: diff(mine, theirs), repeat,
                   row=row and f"diff {row}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    n = args.devices
    rng = random.Random(1)
    tmp = Path(tempfile.mkdtemp(prefix="bench-devices-"))
    try:
        devices = [generate_device(i, rng) for i in range(n)]
        records = sum(len(rs) for d in devices for rs in d.values.values())
        timed(f"generate database A ({n} devices, {records} value records)",
              lambda: write_database(tmp / "a.db", devices))
        print(f"database size: {(tmp / 'a.db').stat().st_size / 1e6:.1f} MB", flush=True)
        catalog = timed("open catalog", lambda: Catalog(user_db=tmp / "a.db",
                                                        use_shipped=False))
        rows = timed(f"list {n} devices", catalog.list)
        assert len(rows) == n
        found = timed("search 'ampere' (name/alias/family/architecture/cc substring)",
                      lambda: catalog.search("ampere"))
        print(f"  ({len(found)} matches)", flush=True)
        timed("search '8.6' again (summaries cached)", lambda: catalog.search("8.6"))
        timed("get one device by exact name", lambda: catalog.get(devices[-1].name))
        if n >= 10_000:       # the prefix is unique among 10 000 devices
            timed("get one device by unique prefix",
                  lambda: catalog.get("synthetic hopper gpu 0999"))
        names = [d.name for d in devices]
        for share in (0.10, 1.0):
            out = tmp / "export.db"
            timed_runs(f"export {share:.0%} of the devices ({int(n * share)}) to a new file",
                       lambda: catalog.export(names[:int(n * share)], out, overwrite=True),
                       args.repeat, before=lambda: out.unlink(missing_ok=True),
                       row="export all" if share == 1.0 else None)
        catalog.close()

        shutil.copy(tmp / "a.db", tmp / "same.db")
        _merge_scenario(tmp, f"B identical to A ({n} devices)", tmp / "same.db",
                        tmp / "a.db", args.repeat)
        for fraction, per_device, what, row in (
                (0.01, True, "1% of the devices edited", None),
                (0.10, True, "10% of the devices edited", "10% edited"),
                (0.10, False, "10% of all values changed, spread over every device",
                 "10% spread")):
            theirs, added, replaced = changed_copy(devices, fraction, rng, per_device)
            (tmp / "b.db").unlink(missing_ok=True)
            write_database(tmp / "b.db", theirs)
            _merge_scenario(tmp, f"B = A with {what}: {added} values added, {replaced} "
                            f"replaced", tmp / "b.db", tmp / "a.db", args.repeat, row=row)
        _merge_scenario(tmp, f"B = A into an empty user database: {n} new devices, "
                        f"{records} records copied", tmp / "a.db", None, args.repeat,
                        row="into empty")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    missed = [f"{row} {cpu:.2f} s" for row, cpu, met in VERDICTS if not met]
    print(f"devices, {n} devices: {len(VERDICTS) - len(missed)} of {len(VERDICTS)} rows "
          f"under {TARGET_S:g} s CPU" + (f"; missed: {', '.join(missed)}" if missed else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
