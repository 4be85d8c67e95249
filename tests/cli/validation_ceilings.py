"""The check the validation sets' tests share: the default model's median error per family
held under a ceiling, and the rows per family held (dropping measured rows must not be how
a median improves)."""
from __future__ import annotations


def assert_default_within_ceilings(set_json: dict, ceilings: dict, rows_per_family: dict,
                                   name: str) -> None:
    medians = {s["family"]: s["median_ape_percent"] for s in set_json["summary"]
               if s["family"] is not None and s["model"] == "gajger"}
    assert set(medians) == set(ceilings)
    worse = {f: round(m, 2) for f, m in medians.items() if m > ceilings[f]}
    assert not worse, f"the default model got worse on {name}: {worse}"
    counts: dict = {}
    for row in set_json["rows"]:
        counts[row["family"]] = counts.get(row["family"], 0) + 1
    assert counts == rows_per_family


def validate_json(devices_db, folder, path) -> dict:
    """`validate PATH --json` with every model, once, in an environment like
    gpumodeler_env's (``folder`` its home): what a module-scoped fixture returns."""
    import pytest

    from in_process import main_json_once, shared_env
    with pytest.MonkeyPatch.context() as mp:
        shared_env(mp, devices_db, folder)
        return main_json_once("validate", path)
