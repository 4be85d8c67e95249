"""Fuzzing the command line in-process (hardening: exit 2, one line): kernel JSON with structured mutations,
random flag values for occupancy/predict/graph/sweep, and byte flips or truncations of a
project and a device database.

Whatever the input, the CLI must end with exit status 0 or 2, print one line on stderr when
it refuses, print no non-finite number (inf, nan, Infinity, NaN) as a result, and leave the
input files byte for byte as they were with nothing new next to them.
"""
import contextlib
import copy
import functools
import io
import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpumodeler.cli.main as cli_main
from gpumodeler.cli.main import main
from gpumodeler.db.build_devices import build

from repetitions import repetitions
from test_hardening import DEVICES

ROOT = Path(__file__).resolve().parents[2]
SAXPY2 = ROOT / "resources" / "kernels" / "saxpy2-maxwell.json"
EXAMPLE = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"
KERNEL = json.loads(SAXPY2.read_text(encoding="utf-8"))
GTX970 = ["--sms", "13", "--sm-clock-mhz", "1253", "--cuda-cores", "128", "--schedulers", "4",
          "--warp-size", "32", "--gmem-bytes-per-cycle", "13.78"]

FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                      HealthCheck.too_slow])
# A non-finite number as a word of its own ("information" and "nano" are fine).
NON_FINITE = re.compile(r"(?<![A-Za-z])(inf|nan|Inf|NaN|Infinity|INF|NAN)(?![A-Za-z])")
# Echoed input in messages is quoted: what the user typed may be "nan".
QUOTED = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")


@pytest.fixture(autouse=True)
def one_parser(monkeypatch):
    """Build the argument parser once for all examples (30 ms a time, most of a run)."""
    monkeypatch.setattr(cli_main, "build_parser",
                        functools.lru_cache(maxsize=1)(cli_main.build_parser))


def snapshot(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def invoke(argv) -> tuple[int, str, str]:
    """The CLI in-process: (exit status, stdout, stderr), checked for an exit status of 0
    or 2, one line on stderr with 2, and no traceback."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:      # argparse's usage errors
            code = exc.code
    out, err = out.getvalue(), err.getvalue()
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        assert err.count("\n") == 1 and err.endswith("\n"), (argv, err)
    assert "Traceback" not in err, (argv, err)
    return code, out, err


def run_cli(argv, folder: Path) -> tuple[int, str, str]:
    """The CLI in-process on files in ``folder``, checked against the rules above."""
    before = snapshot(folder)
    code, out, err = invoke(argv)
    # The temporary folder's random name may hold "nan" (/tmp/tmpd68e0nan): paths are not numbers.
    out_text, err_text = out.replace(str(folder), "<dir>"), err.replace(str(folder), "<dir>")
    assert not NON_FINITE.search(out_text), (argv, NON_FINITE.search(out_text), out[:2000])
    assert not NON_FINITE.search(QUOTED.sub("", err_text)), (argv, err)
    assert snapshot(folder) == before, argv
    return code, out, err


@contextlib.contextmanager
def private_user_db():
    """A fresh user device database (and settings) for one example."""
    saved = {k: os.environ.get(k) for k in ("GPUMODELER_USER_DB", "GPUMODELER_SETTINGS_DIR")}
    with tempfile.TemporaryDirectory() as home:
        os.environ["GPUMODELER_USER_DB"] = str(Path(home) / "user.db")
        os.environ["GPUMODELER_SETTINGS_DIR"] = str(Path(home) / "settings")
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


# -- kernel JSON -----------------------------------------------------------------------------

def _no_non_finite_words(text: str) -> bool:
    return not re.search("inf|nan", text, re.IGNORECASE)


words = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12).filter(
    _no_non_finite_words)
numbers = st.one_of(
    st.integers(-10, 300), st.integers(-2**70, 2**70), st.just(10**400), st.just(-10**400),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0, 1, 0.5, 1e-320, 1e308]))
leaves = st.one_of(st.none(), st.booleans(), numbers, words,
                   st.sampled_from(["a*" * 999 + "a", "N/0", "1/0", "(" * 300 + "a" + ")" * 300,
                                    "a-", "min(a)", "ceil(a, a)", "你好", "\u202e", "a" * 3000]))
values = st.recursive(leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(words, inner, max_size=3)), max_leaves=6)


@st.composite
def mutated_kernel(draw):
    """The saxpy2 kernel with one to three values replaced, keys removed or added, or a
    list or object replaced by deep nesting."""
    data = copy.deepcopy(KERNEL)
    for _ in range(draw(st.integers(1, 3))):
        node = data
        # walk down to a random container
        for _depth in range(draw(st.integers(0, 3))):
            children = (list(node.values()) if isinstance(node, dict) else list(node))
            children = [c for c in children if isinstance(c, (dict, list)) and c]
            if not children:
                break
            node = draw(st.sampled_from(children))
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            continue
        key = draw(st.sampled_from(keys))
        action = draw(st.sampled_from(["replace", "replace", "replace", "delete", "add", "deep"]))
        if action == "replace":
            node[key] = draw(values)
        elif action == "delete":
            del node[key]
        elif action == "add" and isinstance(node, dict):
            node[draw(words)] = draw(values)
        elif action == "deep":
            depth = draw(st.sampled_from([50, 1000, 100_000]))
            node[key] = "__DEEP__"
            text = json.dumps(data, allow_nan=True)
            return text.replace('"__DEEP__"', "[" * depth + "]" * depth, 1)
    return json.dumps(data, allow_nan=True)


@pytest.mark.usefixtures("gpumodeler_env")
@settings(FUZZ, max_examples=repetitions(25, 150))
@given(text=mutated_kernel())
def test_fuzz_kernel_json(text):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "kernel.json"
        path.write_text(text, encoding="utf-8")
        run_cli(["graph", path, "--json"], folder)
        run_cli(["graph", path, *GTX970], folder)
        run_cli(["predict", *GTX970, "--graph", path, "--set", "a=128", "--grid-size", "100",
                 "--block-size", "256", "--occupancy", "32"], folder)


# -- CLI arguments ---------------------------------------------------------------------------

flag_values = st.one_of(
    st.integers(-5, 5000).map(str), st.integers(-2**80, 2**80).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["0", "-1", "1e308", "1e-320", "-0", "1e30", "16M", "1,000,000", "2^20",
                     "1.5GHz", "15.8GB/s", "3us", "2GiB", "nan", "inf", "-inf", "", " ",
                     "1:8", "1:64:7", "32:1024:32", "1,2,4", "5:1", "1:2:0", "a", "9" * 5000,
                     "N/256", "4*N", "a*" * 999 + "a", "你好", "x" * 3600]),
    words)

COMMON_FLAGS = {"--sms": "13", "--sm-clock-mhz": "1253", "--cuda-cores": "128",
                "--schedulers": "4", "--warp-size": "32", "--gmem-bytes-per-cycle": "13.78"}
COMMANDS = {
    "occupancy": ({"--cc": "5.2", "--block-size": "256", "--registers": "32",
                   "--shared-mem": "0", "--carveout": "50"}, ["--json"]),
    "predict": ({**COMMON_FLAGS, "--grid-size": "100", "--block-size": "256",
                 "--occupancy": "32", "--latency-bound": "4014", "--issued-instructions": "538",
                 "--cuda-core-instructions": "535", "--gmem-bytes": "384", "--lambda": "0.7",
                 "--htod": "1.6e9", "--link-bandwidth": "15.8e9", "--startup-htod": "4us",
                 "--lambda-htod": "0.689"}, ["--json"]),
    "graph": ({"--set": "a=128", "--warp-size": "32", **COMMON_FLAGS}, ["--json"]),
    "sweep": ({**COMMON_FLAGS, "--grid-size": "100", "--block-size": "128,256",
               "--occupancy": "8:64:8", "--latency-bound": "4014",
               "--issued-instructions": "538", "--lambda": "0.7"}, ["--format", "json"]),
}


@st.composite
def command_line(draw):
    command = draw(st.sampled_from(sorted(COMMANDS)))
    flags, extra = COMMANDS[command]
    flags = dict(flags)
    for flag in draw(st.lists(st.sampled_from(sorted(flags)), min_size=1, max_size=3,
                              unique=True)):
        if draw(st.integers(0, 5)) == 0:
            del flags[flag]
        else:
            flags[flag] = draw(flag_values)
    argv = [command] + ([SAXPY2] if command == "graph" else [])
    for flag, value in flags.items():
        argv += [flag, value]
    return argv + (extra if draw(st.booleans()) else [])


@pytest.mark.usefixtures("gpumodeler_env")
@settings(FUZZ, max_examples=repetitions(70, 200))
@given(argv=command_line())
def test_fuzz_cli_arguments(argv):
    with tempfile.TemporaryDirectory() as tmp:
        run_cli(argv, Path(tmp))


# -- project and device files ----------------------------------------------------------------

# A damage: ("truncate", fraction of the length kept) or ("flip", [(where, xor)...]), the
# places as fractions, mostly in the first pages (header, schema, meta, small tables).
damages = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1, exclude_max=True)),
    st.tuples(st.just("flip"), st.lists(st.tuples(
        st.one_of(st.floats(0, 0.1), st.floats(0, 1, exclude_max=True)),
        st.integers(1, 255)), min_size=1, max_size=8)))


def damaged(source: bytes, damage) -> bytes:
    how, what = damage
    if how == "truncate":
        return source[:int(what * len(source))]
    data = bytearray(source)
    for where, xor in what:
        data[min(int(where * len(data)), len(data) - 1)] ^= xor
    return bytes(data)


@pytest.mark.usefixtures("gpumodeler_env")
@settings(FUZZ, max_examples=repetitions(40, 120))
@given(damage=damages)
def test_fuzz_project_file(damage):
    content = damaged(EXAMPLE.read_bytes(), damage)
    with tempfile.TemporaryDirectory() as tmp, private_user_db():
        folder = Path(tmp) / "project"
        folder.mkdir()
        path = folder / "damaged.gpm"
        path.write_bytes(content)
        run_cli(["project", "show", path], folder)
        run_cli(["project", "show", path, "--json"], folder)
        run_cli(["project", "predict", path, "--json"], folder)


@pytest.fixture(scope="module")
def small_device_db(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("small-devices")
    (folder / "src").mkdir()
    (folder / "src" / "maxwell.json").write_text(json.dumps(DEVICES), encoding="utf-8")
    build(folder / "src", folder / "devices.db")
    return folder / "devices.db"


@pytest.mark.usefixtures("gpumodeler_env")
@settings(FUZZ, max_examples=repetitions(15, 100))
@given(damage=damages)
def test_fuzz_device_file(small_device_db, devices_db, damage):
    content = damaged(small_device_db.read_bytes(), damage)
    with tempfile.TemporaryDirectory() as tmp, private_user_db():
        folder = Path(tmp) / "share"
        folder.mkdir()
        path = folder / "theirs.db"
        path.write_bytes(content)
        run_cli(["devices", "import", path], folder)
        run_cli(["devices", "diff", path, devices_db, "--json"], folder)
        run_cli(["devices", "show", "GTX 970", "--devices-db", path], folder)
        run_cli(["devices", "list", "--devices-db", path, "--json"], folder)
        run_cli(["devices", "merge", path, "--keep-both"], folder)
