"""Every command of the CLI fuzzed in-process (hardening: exit 2, one line).

The commands and their flags are read from the argument parser itself
(:func:`gpumodeler.cli.main.build_parser`), so a new command or flag is fuzzed without
editing this file. Each example lays a folder of input files (a project, a device database,
kernel JSON, a SASS listing, a measurement file, a CUDA source, files with hostile names,
a sub-folder), maybe damages one of them (truncated, bytes flipped), and runs one command
line of random flags with hostile values (empty, huge, negative, ``nan``, ``inf``,
``1e309``, unicode, ``-``-prefixed, very long, ``../``, existing files of the wrong kind).

Whatever the input: exit status 0 or 2; on 2 exactly one line on stderr and no traceback;
no non-finite number printed as a result; every input file byte for byte as it was and
nothing new next to it; no temporary or SQLite side file (``.tmp``, ``-shm``, ``-wal``,
``-journal``, ``.lock``) left where outputs go or next to the user database.

``gui`` is left out (it opens a window; ``tests/ui`` covers ``--screenshot``). ``kernel
import`` of a ``.cu`` runs a fake nvcc and cuobjdump put first on PATH.
"""
import argparse
import contextlib
import functools
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpumodeler.cli.main as cli_main
from gpumodeler.cli.main import build_parser

from test_fuzz import NON_FINITE, QUOTED, damaged, damages, invoke, small_device_db  # noqa: F401
from repetitions import repetitions
from test_tool_safety import FAKE_CUOBJDUMP, FAKE_NVCC, _script

ROOT = Path(__file__).resolve().parents[2]
RESOURCES = ROOT / "resources"
SASS = sorted((RESOURCES / "kernels" / "sass").glob("*.sass"))
MEASUREMENTS = sorted((RESOURCES / "measurements").glob("*.csv"))
EXAMPLES = sorted((RESOURCES / "examples").glob("*.gpm"))

#: Commands not run here, and why.
EXCLUDED = {"gui": "opens a window (tests/ui renders --screenshot)"}

#: Flags whose value names a file the command writes.
OUTPUT_FLAGS = {"-o", "--output", "--svg", "--screenshot", "--prefix"}
#: Names of left-over temporary and side files.
LITTER = re.compile(r"(\.tmp|-shm|-wal|-journal|\.lock)$|^PWNED$")


def leaf_commands(parser, path=()):
    """(command words, parser) of every command that takes no further sub-command."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    seen = set()
    for action in subs:
        for name, sub in action.choices.items():
            if id(sub) not in seen:  # an alias is the same parser
                seen.add(id(sub))
                yield from leaf_commands(sub, (*path, name))


COMMANDS = {path: [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]
            for path, parser in leaf_commands(build_parser())
            if path[0] not in EXCLUDED}

# -- values ----------------------------------------------------------------------------------

#: Values that make sense for some flags, so that a run gets past the parsing of its flags.
HINTS = {
    "--sms": ["13"], "--sm-clock-mhz": ["1253"], "--cuda-cores": ["128"],
    "--schedulers": ["4"], "--warp-size": ["32"], "--gmem-bytes-per-cycle": ["13.78"],
    "--cc": ["5.2", "8.0"], "--device": ["GTX 970", "H100 SXM5 80GB"], "--gpu": ["GTX 970"],
    "--block-size": ["256", "128,256"], "--registers": ["32"], "--shared-mem": ["0", "48K"],
    "--grid-size": ["100", "1M"], "--data-size": ["16M"], "--occupancy": ["32", "8:64:8"],
    "--latency-bound": ["4014"], "--issued-instructions": ["538"], "--lambda": ["0.7"],
    "--cuda-core-instructions": ["535"], "--gmem-bytes": ["384"], "--set": ["a=128", "N=1M"],
    "--htod": ["1.6e9", "64M"], "--dtoh": ["64M"], "--link-bandwidth": ["15.8e9"],
    "--startup-htod": ["4us"], "--lambda-htod": ["0.689"], "--carveout": ["50"],
    "--model": ["gajger", "roofline", "all"], "--variable": ["grid_size", "block_size"],
    "--values": ["64:1024:64", "1,2,4"], "--sizes": ["1K,1M,64M"],
    "--times": ["1e-5,1e-4,1e-2"], "--estimated": ["1,2,3"], "--measured": ["1.5,2.5,3.5"],
    "--nominal-bandwidth": ["15.8e9"], "--arch": ["sm_52", "sm_80"], "--function": ["saxpy2"],
    "--launch": ["saxpy2", "1"], "--size": ["400x300"], "--tensor-rate": ["fp16=256"],
    "--link": ["PCIe 3.0 x16 (Gajger GTX 970 testbed)"], "--label": ["mine"],
    "name": ["GTX 970"], "text": ["970"], "names": ["GTX 970"],
}

#: The input file a flag or positional reads, by its flag or (for a positional) command and
#: name, so that a run gets past the reading of its files: the first is the right kind.
FILES = {
    "kernel": ["kernel.json"], "--graph": ["kernel.json"], "--project": ["project.gpm"],
    "--measurements": ["measurements.csv"], "--csv": ["measurements.csv"],
    "--profile": ["measurements.csv"], "--batch": ["measurements.csv"],
    "--user-db": ["project.gpm", "kernel.json"], "--devices-db": ["devices.db"],
    "a": ["devices.db"], "b": ["devices.db"], "project": ["project.gpm"],
    ("kernel", "file"): ["listing.sass", "kernel.cu", "$(touch PWNED).cu"],
    ("measure", "file"): ["measurements.csv"], ("devices", "file"): ["devices.db"],
    ("project", "file"): ["project.gpm", "-p.gpm"], ("report", "file"): ["project.gpm"],
    ("timeline", "file"): ["project.gpm"],
}

HOSTILE = [
    "", " ", "0", "-1", "-0", "1e309", "-1e309", "1e308", "1e-320", "nan", "NaN", "inf",
    "-inf", "Infinity", "9" * 5000, "-" + "9" * 400, "1e30", "1:0:1", "5:1", "1,,2", "你好",
    "\u202e", "\u00e9t\u00e9", "-x", "--", "--json", "-", "../", "..", "/", "/dev/null",
    "x" * 3000, "a=", "=1", "a=nan", "N=1e309", "$(touch PWNED)", "; touch PWNED", "*",
    "../../../../etc/passwd", "~", "-o", "\t",
    "\udcff\udcfe",  # bytes that are not UTF-8, as Python gets them from a file name
]


@st.composite
def an_input(draw, layout):
    """A file the folder holds: of the right kind or not, or the folder or nothing there."""
    return draw(st.sampled_from([*layout, "sub", "missing.gpm", "sub/../project.gpm"]))


@st.composite
def value_for(draw, action, layout, outputs: Path, inputs_used, command=""):
    flag = (action.option_strings or [action.dest])[0]
    kinds = ["hostile", "file"]
    right = FILES.get((command, flag)) or FILES.get(flag)
    if right:
        kinds += ["right"] * 4
    if flag in HINTS:
        kinds += ["hint"] * 3
    if action.choices:
        kinds += ["choice"] * 3
    if flag in OUTPUT_FLAGS:
        kinds = ["output"] * 4 + ["file", "hostile"]
    kind = draw(st.sampled_from(kinds))
    if kind == "right":
        return str(layout_dir(outputs) / draw(st.sampled_from(right)))
    if kind == "hint":
        return draw(st.sampled_from(HINTS[flag]))
    if kind == "choice":
        return str(draw(st.sampled_from(list(action.choices))))
    if kind == "file":
        if flag == "--prefix":  # a folder to fill: an input file in its place is refused
            return str(layout_dir(outputs) / draw(st.sampled_from(layout)))
        if flag in OUTPUT_FLAGS:  # a folder where a file goes (another input file would be
            return str(layout_dir(outputs) / "sub")  # a file the user chose to overwrite)
        return str(layout_dir(outputs) / draw(an_input(layout)))
    if kind == "output":
        # a new file where outputs go, one of this command's inputs (refused), stdout
        if inputs_used and draw(st.booleans()):
            return draw(st.sampled_from(inputs_used))
        return draw(st.sampled_from([
            str(outputs / "result.out"), str(outputs / "result.html"), str(outputs / "r.svg"),
            str(outputs / "r.png"), str(outputs / "r.db"), str(outputs / "r.json"),
            str(outputs), "-", str(outputs / ("n" * 300)), str(outputs / "no-folder" / "x"),
            str(outputs / "r\udcff.html"), str(outputs / "r\udcff.svg"),
            str(outputs / "r\udcff.csv")]))
    return draw(st.sampled_from(HOSTILE))


def layout_dir(outputs: Path) -> Path:
    return outputs.parent / "in"


@st.composite
def command_line(draw, path, layout, outputs):
    """A command line of ``path``: its positionals and required options, and up to six other
    flags, each with a value drawn from :func:`value_for`."""
    actions = COMMANDS[path]
    chosen = [a for a in actions if a.required]
    optional = [a for a in actions if not a.required]
    if optional:
        chosen += draw(st.lists(st.sampled_from(optional), max_size=6, unique_by=id))
    argv = list(path)
    inputs_used = []
    # inputs first, so an output flag may name one of them
    chosen.sort(key=lambda a: a.dest.startswith(("output", "o", "svg", "screenshot")))
    for action in chosen:
        flag = action.option_strings[0] if action.option_strings else None
        if action.nargs == 0:
            argv.append(flag)
            continue
        if action.nargs in ("+", "*"):
            count = draw(st.integers(1 if action.nargs == "+" else 0, 3))
        elif action.nargs == "?":
            count = draw(st.integers(0, 1))
        else:
            count = 1
        repeats = draw(st.integers(1, 2)) if isinstance(action, argparse._AppendAction) else 1
        for _ in range(repeats):
            words = [draw(value_for(action, layout, outputs, inputs_used, path[0]))
                     for _ in range(count)]
            if FILES.get((path[0], action.dest)) or FILES.get(flag or action.dest):
                # a file the command reads (not a name, such as a --latency-table key,
                # that happens to be an input's path): an output must not replace it
                inputs_used += [w for w in words if w.startswith(str(layout_dir(outputs)))]
            if flag is None:
                if any(w.startswith("-") for w in words):
                    argv.append("--")  # a positional that looks like a flag, as a user writes it
                    argv += words
                    continue
                argv += words
            elif count == 1 and draw(st.booleans()):
                argv.append(f"{flag}={words[0]}" if flag.startswith("--") else flag + words[0])
            else:
                argv += [flag, *words]
    return argv


# -- the folder of inputs --------------------------------------------------------------------

HOSTILE_NAMES = {"-p.gpm": "project", "$(touch PWNED).cu": "source", "a b;c.json": "kernel"}


def lay_out(folder: Path, sources: dict, damage) -> list[str]:
    """Copies of the inputs in ``folder`` (one maybe damaged); returns their names."""
    folder.mkdir()
    (folder / "sub").mkdir()
    names = []
    victim = damage[0] if damage else None
    for name, source in sources.items():
        data = source.read_bytes()
        if name == victim:
            data = damaged(data, damage[1])
        (folder / name).write_bytes(data)
        names.append(name)
    for name, kind in HOSTILE_NAMES.items():
        shutil.copyfile(folder / {"project": "project.gpm", "source": "kernel.cu",
                                  "kernel": "kernel.json"}[kind], folder / name)
        names.append(name)
    return names


def snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*"))}


def litter(*folders: Path) -> list[str]:
    return [str(p) for f in folders if f.exists() for p in f.rglob("*") if LITTER.search(p.name)]


def _output_names(argv) -> list[str]:
    """The values of output flags in ``argv``, longest first."""
    argv = [str(a) for a in argv]
    names = [b for a, b in zip(argv, argv[1:]) if a in OUTPUT_FLAGS]
    names += [a.split("=", 1)[1] for a in argv if a.split("=", 1)[0] in OUTPUT_FLAGS
              and "=" in a]
    names += [a[2:] for a in argv if a.startswith("-o") and len(a) > 2]
    return sorted((n for n in names if n.strip()), key=len, reverse=True)


def run(argv, inputs: Path, watched: list[Path]) -> tuple[int, str, str]:
    before = snapshot(inputs)
    code, out, err = invoke(argv)
    base = str(inputs.parent)
    out_text, err_text = out.replace(base, "<dir>"), err.replace(base, "<dir>")
    # a message may echo what the user typed ("nan: no such file"): that is not a result
    words = {str(a) for a in argv} | {str(a).split("=", 1)[-1] for a in argv}
    for word in sorted((w for w in words if w.strip()), key=len, reverse=True):
        err_text = err_text.replace(word.replace(base, "<dir>"), "<arg>")
    for name in _output_names(argv):  # "wrote NAME"
        out_text = out_text.replace(name.replace(base, "<dir>"), "<output>")
    assert not NON_FINITE.search(QUOTED.sub("", out_text)), (argv, out[:2000])
    assert not NON_FINITE.search(QUOTED.sub("", err_text)), (argv, err)
    assert snapshot(inputs) == before, argv
    assert litter(inputs, *watched) == [], argv
    return code, out, err


# -- the test --------------------------------------------------------------------------------

FUZZ = settings(deadline=None, max_examples=int(os.environ.get("FUZZ_EXAMPLES", repetitions(10, 50))), suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large,
    HealthCheck.filter_too_much])


@pytest.fixture
def fake_tools(tmp_path, monkeypatch):
    """A fake nvcc and cuobjdump first on PATH; HOME and XDG_DATA_HOME in this test's folder
    (install-desktop-entry writes there)."""
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    _script(bin_dir, "nvcc", FAKE_NVCC)
    _script(bin_dir, "cuobjdump", FAKE_CUOBJDUMP)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_TOOL_LOG", str(tmp_path / "tools.log"))
    monkeypatch.setenv("FAKE_LISTING", str(SASS[0]))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home" / "share"))
    monkeypatch.setattr(cli_main, "build_parser",
                        functools.lru_cache(maxsize=4)(cli_main.build_parser))


def _sources(small_db: Path) -> dict:
    return {"project.gpm": None, "devices.db": small_db, "kernel.json":
            RESOURCES / "kernels" / "saxpy2-maxwell.json", "listing.sass": None,
            "measurements.csv": None, "kernel.cu": RESOURCES / "kernels" / "src" / "saxpy2.cu"}


@pytest.mark.parametrize("path", sorted(COMMANDS), ids=" ".join)
@pytest.mark.usefixtures("gpumodeler_env", "fake_tools")
def test_fuzz_every_command(path, small_device_db, tmp_path, monkeypatch):  # noqa: F811
    user_db = Path(os.environ["GPUMODELER_USER_DB"])
    monkeypatch.setenv("GPUMODELER_LOG_DIR", str(tmp_path / "logs"))

    @FUZZ
    @given(data=st.data(), project=st.sampled_from(EXAMPLES), listing=st.sampled_from(SASS),
           measurements=st.sampled_from(MEASUREMENTS),
           damage=st.one_of(st.none(), st.tuples(st.sampled_from(
               ["project.gpm", "devices.db", "kernel.json", "listing.sass",
                "measurements.csv"]), damages)))
    def fuzz(data, project, listing, measurements, damage):
        sources = _sources(small_device_db)
        sources.update({"project.gpm": project, "listing.sass": listing,
                        "measurements.csv": measurements})
        with tempfile.TemporaryDirectory(dir=tmp_path) as tmp:
            inputs, outputs = Path(tmp) / "in", Path(tmp) / "out"
            layout = lay_out(inputs, sources, damage)
            outputs.mkdir()
            argv = data.draw(command_line(path, layout, outputs), label="argv")
            with contextlib.chdir(outputs):
                run(argv, inputs, [outputs, user_db.parent])
    fuzz()
