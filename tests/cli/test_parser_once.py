"""The CLI's parser is built once per process for each command (cli/main.py, ``parse``): a
command line parsed by the kept parser reads as one parsed by a new parser, a command never
sees a list another command line added to, and words that name no command do not grow the
cache."""
from __future__ import annotations

import pytest

from gpumodeler.cli import main as cli_main
from gpumodeler.cli.main import COMMANDS, build_parser, command_in, parse

GTX970 = ["--sms", "13", "--sm-clock-mhz", "1253", "--cuda-cores", "128", "--schedulers", "4",
          "--warp-size", "32", "--gmem-bytes-per-cycle", "13.78"]
PREDICT = ["predict", *GTX970, "--grid-size", "1562500", "--block-size", "256", "--occupancy",
           "64", "--latency-bound", "4014", "--issued-instructions", "538"]


@pytest.mark.parametrize("argv", [
    PREDICT,
    [*PREDICT, "--htod", "4M", "--htod", "1M"],
    ["occupancy", "--cc", "5.2", "--block-size", "256", "--registers", "32"],
    ["--verbose", "devices", "list", "--kind", "gpu"],
])
def test_the_kept_parser_reads_a_line_as_a_new_one_does(argv):
    for _ in range(2):  # the second parse uses the parser the first one kept
        assert vars(parse(argv)) == vars(build_parser(command_in(argv)).parse_args(argv))


def test_the_parser_is_built_once_per_command(monkeypatch):
    built = []
    real = cli_main.build_parser
    monkeypatch.setattr(cli_main, "build_parser", lambda command=None: built.append(command) or real(command))
    cli_main._parser_for.cache_clear()
    try:
        for _ in range(3):
            parse(PREDICT)
        assert built == ["predict"]
    finally:
        cli_main._parser_for.cache_clear()  # drop the parser built by the stand-in


def test_a_default_list_is_a_new_one_on_every_line():
    first = parse(PREDICT)
    assert first.htod == [] and first.tensor_rate == []
    first.htod.append(123)      # a command adding to its list of copies...
    first.tensor_rate.append(("fp16", 1.0))
    again = parse(PREDICT)      # ...leaves the next command line's default empty
    assert again.htod == [] and again.tensor_rate == []
    assert again.htod is not first.htod
    given = parse([*PREDICT, "--htod", "4M"])
    assert len(given.htod) == 1 and given.htod[0] > 0 and parse(PREDICT).htod == []


def test_words_that_name_no_command_share_one_parser(capsys):
    cli_main._parser_for.cache_clear()
    parse(PREDICT)
    for word in ("nope", "predic", "x" * 50, "\u00e9t\u00e9"):
        with pytest.raises(SystemExit) as exc:
            parse([word, "--json"])
        assert exc.value.code == 2 and "invalid choice" in capsys.readouterr().err
    # the predict parser, and one listing every command for all the words
    assert cli_main._parser_for.cache_info().currsize == 2
    assert set(COMMANDS) >= {"predict"}
