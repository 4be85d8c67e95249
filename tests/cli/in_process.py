"""The CLI run in this process, for tests: (exit status, stdout, stderr)."""
from gpumodeler.cli.main import main


def cli(capsys, *argv):
    """``gpumodeler ARGV...`` in-process; a SystemExit (argparse) gives its code."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys, *argv):
    """The parsed ``--json`` output of ``gpumodeler ARGV... --json``, which must succeed."""
    import json
    code, out, err = cli(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)
