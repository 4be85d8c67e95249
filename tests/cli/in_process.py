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


def main_json(*argv):
    """The parsed ``--json`` output of ``gpumodeler ARGV... --json`` run in this process
    without pytest's capsys (which is per test): for a module- or session-scoped fixture that
    computes an expensive output once and hands it to several tests."""
    import contextlib
    import io
    import json
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main([*(str(a) for a in argv), "--json"])
    assert code == 0, argv
    return json.loads(buf.getvalue())


#: main_json_once's outputs by command line and device database, for the session.
_OUTPUTS: dict[tuple[str, ...], object] = {}


def main_json_once(*argv):
    """main_json's output of ``argv``, computed once a session for the device database the
    environment names (GPUMODELER_DEVICES_DB), in an environment whose user database holds no
    device, and only read by the tests given it: module fixtures of several modules that
    need the same expensive output (``validate`` of a shipped set) share one run."""
    import os
    key = (os.environ.get("GPUMODELER_DEVICES_DB", ""), *(str(a) for a in argv))
    if key not in _OUTPUTS:
        _OUTPUTS[key] = main_json(*argv)
    return _OUTPUTS[key]


def shared_env(mp, devices_db, folder):
    """Through the MonkeyPatch ``mp``, the environment tests/conftest.py's gpumodeler_env
    gives a test (the built device database; a user database, settings and logs of
    ``folder``'s), for a fixture wider than one test."""
    mp.setenv("GPUMODELER_DEVICES_DB", str(devices_db))
    mp.setenv("GPUMODELER_USER_DB", str(folder / "user-home" / "user-devices.db"))
    mp.setenv("GPUMODELER_SETTINGS_DIR", str(folder / "settings"))
    mp.setenv("GPUMODELER_LOG_DIR", str(folder / "logs"))
