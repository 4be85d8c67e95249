"""Copy engines of the Kepler boards Amarís ran (Amarís 2018, Table A.1, column "# CE"): two
on the Tesla K20, Tesla K40 and GTX TITAN, so their host-to-device and device-to-host copies
overlap on the timeline; one on the GTX 680."""
from pathlib import Path

import pytest

from gpumodeler.db.catalog import Catalog

SHIPPED = Path(__file__).resolve().parents[2] / "devices.db"


@pytest.fixture(scope="module")
def catalog(tmp_path_factory):
    with Catalog(user_db=tmp_path_factory.mktemp("u") / "user.db", shipped_db=SHIPPED) as c:
        yield c


@pytest.mark.parametrize("name, engines", [("Tesla K20", 2), ("Tesla K40", 2),
                                           ("GeForce GTX TITAN", 2), ("GeForce GTX 680", 1)])
def test_amaris_table_a1_copy_engines(catalog, name, engines):
    device = catalog.get(name)
    record = device.default_record("copy_engines")
    assert record.value == engines and record.source == "amaris2018"
    assert "Table A.1" in record.where and "# CE" in record.where
    assert device.to_gpu_spec().copy_engines == engines
