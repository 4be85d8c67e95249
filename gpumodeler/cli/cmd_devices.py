"""`gpumodeler devices`: list, show, search, export, import, merge and diff device databases.

Every subcommand takes ``--json``. ``import`` only reports what a merge would do; ``merge``
needs a choice for each conflict (``--keep-mine``, ``--keep-both``, ``--take-theirs
[FIELD...]`` or ``--resolutions FILE.json``) and otherwise writes nothing.
"""
from __future__ import annotations

import argparse
import json
import sys

from typing import TYPE_CHECKING

from gpumodeler.cli.common import require_finite
from gpumodeler.cli.main import CLIError
from gpumodeler.db.fields import FIELDS, KINDS, field_order
from gpumodeler.db.records import DeviceRecord, DeviceSummary

if TYPE_CHECKING:  # the database layer (sqlite-utils) is loaded by the action that runs
    from gpumodeler.db.catalog import Catalog
    from gpumodeler.db.merge import MergeReport

UNKNOWN = "unknown"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "devices", help="browse, share and merge the device database",
        description="Browse the device catalog (shipped devices plus your own) and share "
                    "devices as database files.")
    sub = parser.add_subparsers(dest="devices_command", metavar="ACTION",
                                parser_class=type(parser))
    sub.required = True

    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON")
    common.add_argument("--user-db", metavar="FILE",
                        help="your device database (default: $GPUMODELER_USER_DB or the "
                             "user-data folder)")
    common.add_argument("--devices-db", metavar="FILE",
                        help="the shipped device database (default: $GPUMODELER_DEVICES_DB "
                             "or devices.db next to the package)")

    p = sub.add_parser("list", parents=[common], help="list devices")
    p.add_argument("--kind", choices=KINDS)
    p.set_defaults(func=_list)

    p = sub.add_parser("show", parents=[common], help="show every value of a device")
    p.add_argument("name", help="name, alias or unambiguous prefix (case-insensitive)")
    p.set_defaults(func=_show)

    p = sub.add_parser("search", parents=[common],
                       help="find devices by name, alias, architecture or compute capability")
    p.add_argument("text")
    p.set_defaults(func=_search)

    p = sub.add_parser("export", parents=[common],
                       help="write devices to a standalone database file")
    p.add_argument("names", nargs="+", metavar="NAME")
    p.add_argument("-o", "--output", required=True, metavar="FILE")
    p.add_argument("--force", action="store_true", help="overwrite an existing FILE")
    p.set_defaults(func=_export)

    p = sub.add_parser("import", parents=[common],
                       help="report what merging FILE would do (writes nothing)")
    p.add_argument("file")
    p.set_defaults(func=_import)

    p = sub.add_parser("merge", parents=[common], help="merge FILE into your devices")
    p.add_argument("file")
    choice = p.add_mutually_exclusive_group()
    choice.add_argument("--keep-mine", action="store_true",
                        help="resolve every open conflict with your records")
    choice.add_argument("--keep-both", action="store_true",
                        help="keep both sides' records (yours stay the default)")
    p.add_argument("--take-theirs", nargs="*", metavar="FIELD",
                   help="take their records for these fields (every field if none given)")
    p.add_argument("--resolutions", metavar="FILE.json",
                   help='per-field choices: {"DEVICE": {"FIELD": "mine|theirs|both"}}, '
                        '"*" matches any device or field')
    p.set_defaults(func=_merge)

    p = sub.add_parser("diff", parents=[common], help="compare two device database files")
    p.add_argument("a", help="mine")
    p.add_argument("b", help="theirs")
    p.set_defaults(func=_diff)


def _catalog(args) -> Catalog:
    from gpumodeler.db.catalog import Catalog
    return Catalog(user_db=args.user_db, shipped_db=args.devices_db)


def _print_json(data) -> None:
    require_finite(data)
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def _summary_dict(s: DeviceSummary) -> dict:
    return {"kind": s.kind, "name": s.name, "aliases": list(s.aliases), "origin": s.origin,
            "shadows_shipped": s.shadows_shipped, "family": s.family, "vendor": s.vendor,
            "architecture": s.architecture, "compute_capability": s.compute_capability}


def _origin(origin: str, shadows: bool) -> str:
    return f"{origin} (shadows shipped)" if shadows else origin


def _print_summaries(rows: list[DeviceSummary]) -> None:
    table = [("NAME", "KIND", "ARCHITECTURE", "CC", "ORIGIN")]
    for s in rows:
        table.append((s.name, s.kind, s.architecture or s.family or "-",
                      s.compute_capability or "-", _origin(s.origin, s.shadows_shipped)))
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]) - 1)]
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])


def _list(args) -> int:
    with _catalog(args) as catalog:
        rows = catalog.list(args.kind)
        if args.json:
            _print_json([_summary_dict(s) for s in rows])
        elif not rows:
            where = catalog.shipped_path or "no shipped device database found"
            print(f"no devices ({where}; your devices: {catalog.user_path})")
        else:
            _print_summaries(rows)
    return 0


def _search(args) -> int:
    with _catalog(args) as catalog:
        rows = catalog.search(args.text)
    if args.json:
        _print_json([_summary_dict(s) for s in rows])
    elif not rows:
        print(f"no device matches '{args.text}'")
    else:
        _print_summaries(rows)
    return 0


def _fields_in_order(device: DeviceRecord) -> list[str]:
    return sorted(device.values, key=lambda f: field_order(device.kind, f))


def device_to_dict(device: DeviceRecord) -> dict:
    return {"kind": device.kind, "name": device.name, "aliases": list(device.aliases),
            "family": device.family, "origin": device.origin,
            "shadows_shipped": device.shadows_shipped,
            "values": {f: [_merge_module().record_to_dict(r) for r in device.values[f]]
                       for f in _fields_in_order(device)},
            "not_recorded": [f for f in FIELDS.get(device.kind, {}) if f not in device.values],
            "sources": dict(device.sources)}


def _show(args) -> int:
    with _catalog(args) as catalog:
        device = catalog.get(args.name)
    require_finite({f: [r.value for r in rs] for f, rs in device.values.items()}, device.name)
    if args.json:
        _print_json(device_to_dict(device))
        return 0
    print(device.name)
    print(f"  kind: {device.kind}   family: {device.family or '-'}   origin: "
          f"{_origin(device.origin, device.shadows_shipped)}")
    if device.aliases:
        print(f"  aliases: {', '.join(device.aliases)}")
    rows = []
    documented = FIELDS.get(device.kind, {})
    fields = sorted(set(device.values) | set(documented),
                    key=lambda f: field_order(device.kind, f))
    for f in fields:
        records = device.values.get(f, ())
        if not records:  # absent from the database: unknown, nobody recorded it
            rows.append((" ", f, UNKNOWN, documented[f], "-", "-", "-", ""))
        for r in records:
            value = UNKNOWN if r.value is None else str(r.value)
            source = r.source or r.source_text or "-"
            rows.append(("*" if r.is_default and len(records) > 1 else " ", f, value,
                         r.unit, r.provenance or "-", source, r.where or "-", r.note or ""))
    header = (" ", "FIELD", "VALUE", "UNIT", "PROVENANCE", "SOURCE", "WHERE", "NOTE")
    table = [header] + rows
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    for r in table:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    if any(len(rs) > 1 for rs in device.values.values()):
        print("  * the default, used by the model, where sources disagree")
    if device.sources:
        print("  sources:")
        for key, citation in device.sources.items():
            print(f"    {key}: {citation}")
    return 0


def _export(args) -> int:
    from gpumodeler.db.atomic_files import check_not_input
    with _catalog(args) as catalog:
        # with --force, the export would replace the database it reads
        check_not_input(args.output, [(catalog.user_path, "your device database"),
                                      (catalog.shipped_path, "the device database")])
        try:
            path = catalog.export(args.names, args.output, overwrite=args.force)
        except OSError as exc:
            raise CLIError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    if args.json:
        _print_json({"path": str(path), "devices": args.names})
    else:
        print(f"wrote {path}")
    return 0


def _merge_module():
    from gpumodeler.db import merge
    return merge


def _print_report(report: MergeReport, verb: str) -> None:
    describe_records = _merge_module().describe_records
    counts = report.counts()
    print(f"{report.theirs} vs {report.mine}: " + ", ".join(
        f"{n} {s}" for s, n in counts.items() if n))
    for device in report.devices:
        if device.status == "identical":
            continue
        print(f"  {device.status:<11} {device.name} ({device.kind})")
        for c in device.fields:
            label = {"mine": "keep mine", "theirs": verb, "conflict": "CONFLICT",
                     "declined": "keep mine (declined before)"}[c.status]
            why = f" ({c.reason})" if getattr(c, "reason", "") else ""
            print(f"      {c.field}: {label}: mine {describe_records(c.mine)}; theirs "
                  f"{describe_records(c.theirs)}{why}")
    for old, new in report.renamed_sources.items():
        print(f"  source '{old}' is cited differently here; theirs becomes '{new}'")
    for problem in report.problems:
        print(f"  refused: {problem}")


def _import(args) -> int:
    with _catalog(args) as catalog:
        report = catalog.import_file(args.file)
    if args.json:
        _print_json(report.to_dict())
    else:
        _print_report(report, "would take theirs")
        if report.conflicts:
            print(f"{len(report.conflicts)} conflict(s): merge with --keep-mine, --keep-both,"
                  f" --take-theirs FIELD... or --resolutions FILE.json")
    return 0


def _resolutions(args) -> tuple[dict, str | None]:
    resolutions: dict = {}
    if args.resolutions:
        try:
            from .common import read_input
            resolutions = json.loads(read_input(args.resolutions, "a JSON file of resolutions")
                                     .decode("utf-8"))
        except OSError as exc:
            raise CLIError(f"cannot read {args.resolutions}: {exc.strerror}") from None
        except ValueError as exc:
            raise CLIError(f"{args.resolutions}: not valid JSON ({exc})") from None
        if not isinstance(resolutions, dict):
            raise CLIError(f'{args.resolutions}: expected {{"DEVICE": {{"FIELD": '
                           f'"mine|theirs|both"}}}}')
    from gpumodeler.db.merge import BOTH, MINE, THEIRS
    policy = MINE if args.keep_mine else BOTH if args.keep_both else None
    if args.take_theirs is not None:
        if not args.take_theirs:
            if policy is not None:
                raise CLIError("--take-theirs without fields takes every field; it cannot "
                               "be combined with --keep-mine or --keep-both")
            policy = THEIRS
        for field_name in args.take_theirs:
            resolutions.setdefault("*", {})
            if isinstance(resolutions["*"], str):
                raise CLIError("--take-theirs FIELD conflicts with a '*' policy in "
                               "--resolutions")
            resolutions["*"][field_name] = THEIRS
    return resolutions, policy


def _merge(args) -> int:
    resolutions, policy = _resolutions(args)
    with _catalog(args) as catalog:
        report = catalog.merge(args.file, resolutions, policy=policy)
    if args.json:
        _print_json(report.to_dict())
    else:
        _print_report(report, "took theirs")
        print(f"merged into {report.mine}")
    return 0


def _diff(args) -> int:
    from gpumodeler.db.catalog import diff
    report = diff(args.a, args.b)
    if args.json:
        _print_json(report.to_dict())
    else:
        _print_report(report, "theirs adds")
    return 0
