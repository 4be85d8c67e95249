"""Regressions of what fuzzing every command found (tests/cli/test_fuzz_commands.py)."""
import pytest

from gpumodeler.cli.main import build_parser, main


def test_a_double_dash_as_an_option_value_is_that_value(capsys):
    """Python 3.11's argparse turned ``--user-db=--`` into an empty list, and the command
    died with a TypeError (exit 1): the value is the text "--" like any other."""
    assert build_parser().parse_args(["devices", "show", "x", "--user-db=--"]).user_db == "--"
    assert build_parser().parse_args(["devices", "list", "--devices-db=--"]).devices_db == "--"


@pytest.mark.usefixtures("gpumodeler_env")
@pytest.mark.parametrize("argv", [["devices", "show", "GTX 970", "--user-db=--"],
                                  ["devices", "search", "970", "--devices-db=--"],
                                  ["predict", "--sms=--", "--device", "GTX 970"]])
def test_a_double_dash_value_ends_in_0_or_2(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse refuses the value
        code = exc.code
    err = capsys.readouterr().err
    assert code in (0, 2), err
    assert "internal error" not in err
