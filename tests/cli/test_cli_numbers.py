"""CLI flags read numbers with the GUI's grammar (core/quantities.py): 16M, 16Mi, 2^20,
1,000,000 on single-value flags; in sweep lists a comma separates values."""
import json
import subprocess
import sys

import pytest

from gpumodeler.cli.main import main

GTX970 = ["--sms", "13", "--sm-clock-mhz", "1253", "--cuda-cores", "128", "--schedulers", "4",
          "--warp-size", "32", "--gmem-bytes-per-cycle", "13.78"]
KERNEL = ["--occupancy", "64", "--latency-bound", "4014", "--issued-instructions", "538"]
PCIE = ["--link-bandwidth", "15.8e9", "--startup-htod", "3.96868e-6", "--lambda-htod", "0.689"]


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def predict(capsys, *argv):
    code, out, err = run(capsys, "predict", *GTX970, *KERNEL, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("flag, written, plain", [
    ("--grid-size", "16M", "16000000"),
    ("--grid-size", "16Mi", "16777216"),
    ("--grid-size", "1,000,000", "1000000"),
    ("--grid-size", "2^20", "1048576"),
    ("--grid-size", "2**20", "1048576"),
    ("--data-size", "2^20", "1048576"),
    ("--data-size", "1e6", "1000000"),
])
def test_predict_size_flags_take_the_number_grammar(capsys, flag, written, plain):
    base = ["--block-size", "256", "--htod", "1GB", *PCIE]
    assert predict(capsys, flag, written, *base) == predict(capsys, flag, plain, *base)


def test_block_size_with_a_thousands_comma_and_dimensions(capsys):
    grid = ["--grid-size", "100"]
    assert predict(capsys, *grid, "--block-size", "1,024") == predict(capsys, *grid, "--block-size", "1024")
    assert predict(capsys, "--grid-size", "1Kix1Ki", "--block-size", "256") == \
        predict(capsys, "--grid-size", "1024x1024", "--block-size", "256")
    assert predict(capsys, "--grid-size", "1Kx1,000", "--block-size", "256") == \
        predict(capsys, "--grid-size", "1000x1000", "--block-size", "256")


def test_quantity_flags_take_prefixed_powers_and_grouped_numbers(capsys):
    grid = ["--grid-size", "100", "--block-size", "256"]
    plain = predict(capsys, *grid, "--htod", "1048576", "--htod", "16000000", *PCIE)
    assert predict(capsys, *grid, "--htod", "2^20", "--htod", "16M", *PCIE) == plain
    assert predict(capsys, *grid, "--htod", "1Mi", "--htod", "16,000,000B", *PCIE) == plain
    assert predict(capsys, *grid, "--htod", "1MiB", "--htod", "16MB", *PCIE) == plain
    fast = [*PCIE[:1], "15.8G", *PCIE[2:]]
    assert predict(capsys, *grid, "--htod", "1Mi", "--htod", "16M", *fast) == plain


def test_sweep_lists_separate_values_by_commas(capsys):
    """The documented choice: in a value list a comma separates values, so 1,024 is 1 and 24,
    while each value takes prefixes and powers."""
    args = ["sweep", *GTX970, *KERNEL, "--format", "json", "--block-size", "256"]
    code, out, err = run(capsys, *args, "--grid-size", "1M,2^21")
    assert code == 0, err
    assert [r["grid_size"] for r in json.loads(out)] == [1_000_000, 2**21]
    code, out, err = run(capsys, *args, "--grid-size", "1,024")
    assert code == 0, err
    assert [r["grid_size"] for r in json.loads(out)] == [1, 24]
    code, out, err = run(capsys, *args, "--grid-size", "1Ki:4Ki:1Ki")
    assert code == 0, err
    assert [r["grid_size"] for r in json.loads(out)] == [1024, 2048, 3072, 4096]


@pytest.mark.parametrize("argv, message", [
    (["--grid-size", "1,5", "--block-size", "256"],
     "'1,5': a comma may only group digits by three (1,000,000); use a point for decimals"),
    (["--grid-size", "16m", "--block-size", "256"],
     "'16m' is not a whole number (e.g. 1000000, 1e6, 1,000,000, 16M, 16Mi or 2^20)"),
    (["--grid-size", "2^0.5", "--block-size", "256"], "'2^0.5' is not a whole number"),
    (["--grid-size", "2^60", "--block-size", "256"], "whole numbers go up to 2^53"),
    (["--grid-size", "10^400", "--block-size", "256"], "'10^400' is not a finite number"),
    (["--grid-size", "100", "--block-size", "256", "--htod", "16MMB", *PCIE],
     "'16MMB' is not a valid size in bytes (e.g. 1.6e9, 1.6GB or 16M; units: b, kb"),
    (["--grid-size", "100", "--block-size", "256", "--htod", "1,5GB", *PCIE],
     "'1,5GB': a comma may only group digits by three"),
    (["--grid-size", "100", "--block-size", "256", "--sm-clock-mhz", "1.253G"],
     "'1.253G' is not a valid clock in MHz (e.g. 1253 or 1.253GHz"),
    (["--grid-size", "100", "--block-size", "256", "--lambda", "abc"],
     "'abc' is not a number (e.g. 1000000, 1e6, 1,000,000, 16M, 16Mi or 2^20)"),
])
def test_bad_numbers_exit_2_with_one_line_naming_the_valid_forms(capsys, argv, message):
    code, out, err = run(capsys, "predict", *GTX970, *KERNEL, *argv)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_bad_number_in_a_subprocess_is_one_line():
    r = subprocess.run([sys.executable, "-m", "gpumodeler", "predict", "--grid-size", "1,5",
                        "--block-size", "256"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "comma" in r.stderr
