"""The report leads with its answer: a table of contents, a summary in engineering units
(each launch's times, bound and models' spread; each application's makespan, energy and
critical path), then the figures, then the details, identical devices shown once; printable
(tables kept whole, header rows repeated)."""
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.core.units_format import format_si
from gpumodeler.core.units_format import format_time
from gpumodeler.db.catalog import Catalog
from gpumodeler.db.project_file import load_project

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "resources" / "examples").glob("*.gpm"))
FOUR_H100 = ROOT / "resources" / "examples" / "four-h100-nvlink.gpm"

pytestmark = pytest.mark.usefixtures("gpumodeler_env")


class Outline(HTMLParser):
    """The ids, the in-page links, the headings (tag, id, text) and the text of each part."""

    def __init__(self):
        super().__init__()
        self.ids, self.hrefs, self.headings = [], [], []
        self._heading = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        if "href" in a:
            self.hrefs.append(a["href"])
        if tag in ("h2", "h3", "h4"):
            self._heading = [tag, a.get("id"), ""]

    def handle_endtag(self, tag):
        if self._heading is not None and tag == self._heading[0]:
            self.headings.append(tuple(self._heading))
            self._heading = None

    def handle_data(self, data):
        if self._heading is not None:
            self._heading[2] += data


def _report(example, tmp_path, capsys) -> str:
    out = tmp_path / f"{example.stem}.html"
    assert main(["report", str(example), "-o", str(out)]) == 0, capsys.readouterr().err
    return out.read_text(encoding="utf-8")


def _part(html: str, start: str, end: str) -> str:
    """The HTML between the heading with id ``start`` and the one with id ``end``."""
    i, j = html.index(f"id='{start}'"), html.index(f"id='{end}'")
    assert i < j
    return html[i:j]


@pytest.fixture(scope="module")
def predictions():
    """{example: report_data} of each bundled example."""
    from gpumodeler.service.report import report_data
    with Catalog() as catalog:
        yield lambda example: report_data(load_project(example), catalog)


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_the_summary_comes_first_and_gives_the_answer_in_engineering_units(example, tmp_path, capsys,
                                                                          predictions):
    html = _report(example, tmp_path, capsys)
    p = Outline()
    p.feed(html)
    order = [h[1] for h in p.headings if h[1] in ("summary", "figures", "details", "devices")]
    assert order == ["summary", "figures", "details", "devices"]
    first_device_table = html.index("id='devices'")
    summary = _part(html, "summary", "figures")
    assert html.index("id='summary'") < first_device_table
    data = predictions(example)
    for entry in data["launches"]:
        r, sp = entry["prediction"], entry["spread"]
        assert entry["error"] is None and sp is not None and sp["models"] >= 2
        for seconds in (r["kernel_time_s"], r["total_time_s"], sp["min_s"], sp["max_s"]):
            assert format_time(seconds) in summary
        assert sp["min_s"] <= r["kernel_time_s"] * 1.5 and sp["max_s"] >= sp["min_s"]
        assert f"{r['mode']}-bound" in summary and r["device"] in summary
    for entry in data["applications"]:
        r = entry["result"]
        assert format_time(r["makespan_s"]) in summary
        assert " → ".join(r["critical_path"]).replace(">", "&gt;") in summary
        if r["energy_j"] is None:
            assert "not known (" in summary and r["energy_unknown"][0] in summary
        else:
            assert format_si(r["energy_j"], "J") in summary
    # engineering units: no raw clock in Hz, no long unformatted float, no bare seconds
    text = re.sub(r"<[^>]+>", " ", summary)
    assert not re.search(r"\d{7,}", text), text
    assert not re.search(r"\d\.\d{5,}", text), text
    assert not re.search(r"\de[-+]?\d", text), text


def test_the_four_identical_h100s_share_one_device_table(tmp_path, capsys):
    html = _report(FOUR_H100, tmp_path, capsys)
    project = load_project(FOUR_H100)
    gpus = [d for d in project.devices.values() if d.kind == "gpu"]
    assert len(gpus) == 4 and len({d.device_name for d in gpus}) == 1
    devices = _part(html, "devices", "links")
    p = Outline()
    p.feed(devices)
    titles = [h[2] for h in p.headings if h[0] == "h4"]
    assert len(titles) == 2          # the host, and the four GPUs once
    merged = [t for t in titles if gpus[0].device_name in t]
    assert len(merged) == 1 and "×4" in merged[0]
    assert all(d.id in merged[0] for d in gpus)
    assert devices.count("<table>") == 2
    # clocks in engineering units, every digit kept: no raw count of hertz anywhere
    with Catalog() as catalog:
        clock = catalog.get(gpus[0].device_name).default_record("boost_clock_hz").value
    assert clock > 1e9
    assert format_si(float(clock), "Hz", 12) in devices and str(int(clock)) not in html
    # the four PCIe and the four NVLink connections: one table each
    links = _part(html, "links", "kernels")
    assert links.count("<table>") == 2 and links.count("×4") == 2


def test_an_overridden_device_keeps_its_own_table(tmp_path, capsys):
    from gpumodeler.db.project_file import save_project
    project = load_project(FOUR_H100)
    project.devices["gpu3"].overrides["sm_clock_hz"] = 1.5e9
    path = tmp_path / "changed.gpm"
    save_project(project, path)
    html = _report(path, tmp_path, capsys)
    p = Outline()
    p.feed(_part(html, "devices", "links"))
    titles = [h[2] for h in p.headings if h[0] == "h4"]
    assert len(titles) == 3 and any("×3" in t for t in titles)
    assert any(t.startswith("gpu3") for t in titles)


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_the_contents_anchors_resolve_and_the_report_prints_whole(example, tmp_path, capsys):
    html = _report(example, tmp_path, capsys)
    p = Outline()
    p.feed(html)
    assert len(p.ids) == len(set(p.ids))        # every id once
    assert p.hrefs and all(h.startswith("#") for h in p.hrefs)
    assert {h[1:] for h in p.hrefs} <= set(p.ids)
    nav = html[html.index("<nav"):html.index("</nav>")]
    for part in ("summary", "figures", "details", "devices", "sweeps", "timelines"):
        assert f"href='#{part}'" in nav
    css = html[html.index("<style>"):html.index("</style>")]
    media = css[css.index("@media print"):]
    assert "table{break-inside:avoid}" in media and "thead{display:table-header-group}" in media
    assert not re.search(r"(^|[;{])width:\s*\d", css)       # no fixed width cuts a table
    assert html.count("<table>") == html.count("<thead>") > 0
    # reproducible: the same bytes twice
    assert _report(example, tmp_path, capsys) == html


@pytest.mark.parametrize("value, unit, text", [
    (0.0123, "J", "12.3 mJ"), (1.98e9, "Hz", "1.98 GHz"), (0.0, "J", "0 J"),
    (0.99996, "J", "1 J"), (-3e3, "W", "-3 kW"), (2.5e-7, "J·s", "250 nJ·s")])
def test_format_si_puts_the_mantissa_in_one_to_a_thousand(value, unit, text):
    assert format_si(value, unit) == text


def test_a_known_energy_is_summarised_in_joules(tmp_path, capsys):
    from gpumodeler.db.project_file import save_project
    from gpumodeler.service.report import report_data
    example = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"
    project = load_project(example)
    gpu = next(d for d in project.devices.values() if d.kind == "gpu")
    gpu.overrides.update({"board_power_w": 145.0, "idle_power_w": 12.5})
    path = tmp_path / "powered.gpm"
    save_project(project, path)
    with Catalog() as catalog:
        r = report_data(load_project(path), catalog)["applications"][0]["result"]
    assert r["energy_j"] is not None and r["energy_j"] > 0
    summary = _part(_report(path, tmp_path, capsys), "summary", "figures")
    assert format_si(r["energy_j"], "J") in summary and "not known" not in summary
    assert format_si(r["energy_delay_js"], "J·s") in summary


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_the_spread_reuses_the_analyses_and_agrees_with_a_fresh_comparison(example, predictions):
    from gpumodeler.core.models.graph_inputs import compare_launch
    from gpumodeler.core.models.registry import spread
    from gpumodeler.service import ProjectEvaluation, catalog_lookups
    project = load_project(example)
    with Catalog() as catalog:
        lookups = catalog_lookups(catalog)
        for entry in predictions(example)["launches"]:
            result = ProjectEvaluation(project, lookups).launch(entry["id"])
            fresh = spread(compare_launch(project, entry["id"], result,
                                          table_lookup=lookups.get("table_lookup")))
            assert entry["spread"] == fresh.summary()


def test_a_stored_calibration_is_listed_in_the_details(tmp_path, capsys):
    import hashlib

    from gpumodeler.db.calibrations import Calibration, save_calibration
    example = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"
    link = next(iter(load_project(example).connections.values())).link_name
    cal = Calibration(link, "link", "htod", "pinned-copies", {
        "model": "regimes", "startup_s": 6e-6,
        "regimes": [{"first_size_bytes": 4.0, "last_size_bytes": 2.0 ** 31,
                     "bandwidth_bytes_per_s": 1.2e10}]},
        (), 1.25, 1.75, 1.0, "copies.json", hashlib.sha256(b"copies").hexdigest(),
        "2026-11-23T10:00:00Z")
    before = _report(example, tmp_path, capsys)
    before = before[before.index("id='calibrations'"):]
    with Catalog() as catalog:
        save_calibration(catalog, cal)
    html = _report(example, tmp_path, capsys)
    details = html[html.index("id='calibrations'"):html.index("<footer>")]
    assert "pinned-copies" not in before and "pinned-copies" in details
    assert link in details and "1.25 %" in details and "1.75 %" in details and "copies.json" in details
    assert html.index("id='summary'") < html.index("id='calibrations'")
