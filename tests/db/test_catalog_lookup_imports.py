"""Opening the device catalog and looking a device up (every command with a project: the
timeline, predictions) loads no module of merging or sharing device databases (start-up
time); a merge loads them when it is asked for."""
from __future__ import annotations

import json
import subprocess
import sys

PROBE = ("import json, sys\n"
         "from gpumodeler.db.catalog import Catalog\n"
         "with Catalog() as catalog:\n"
         "    name = next(d.name for d in catalog.list() if d.kind == 'gpu')\n"
         "    catalog.get(name).to_gpu_spec()\n"
         "print(json.dumps(sorted(m for m in sys.modules if m.startswith('gpumodeler.db.'))))\n")


def test_a_device_lookup_loads_no_merging(gpumodeler_env):
    loaded = json.loads(subprocess.run([sys.executable, "-c", PROBE],
                                       capture_output=True, text=True, check=True).stdout)
    assert "gpumodeler.db.catalog" in loaded and "gpumodeler.db.store" in loaded
    assert "gpumodeler.db.merge" not in loaded and "gpumodeler.db.sharing" not in loaded


def test_the_merge_report_type_is_the_one_merging_gives(catalog, tmp_path):
    from gpumodeler.db.merge import MergeReport
    path = catalog.export([catalog.list()[0].name], tmp_path / "one.db")
    assert isinstance(catalog.import_file(path), MergeReport)
