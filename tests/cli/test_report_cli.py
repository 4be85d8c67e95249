"""`gpumodeler report`: one self-contained, reproducible HTML file."""
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gpumodeler.cli.main import main
from gpumodeler.db.catalog import Catalog
from gpumodeler.db.project_file import load_project

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "resources" / "examples").glob("*.gpm"))

pytestmark = pytest.mark.usefixtures("gpumodeler_env")


class Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attrs, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


def _value_text(v, unit=""):
    """A value as the report writes it: clocks, bandwidths and powers with an SI prefix,
    times in s/ms/µs/ns, every digit kept; other numbers as they are."""
    from gpumodeler.core.units_format import format_si
    from gpumodeler.core.units_format import format_time
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v:
        if unit in ("Hz", "B/s", "W"):
            return format_si(float(v), unit, 12)
        if unit == "s":
            return format_time(float(v), 12)
    return str(v) if isinstance(v, (int, str)) else f"{v:.6g}"


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_report_is_self_contained_complete_and_reproducible(example, capsys, tmp_path, devices_db):
    out = tmp_path / "report.html"
    assert main(["report", str(example), "-o", str(out)]) == 0, capsys.readouterr().err
    html = out.read_text(encoding="utf-8")
    p = Collect()
    p.feed(html)
    text = " ".join(p.text)
    assert "svg" in p.tags and "script" not in p.tags
    # no external resources: no src, no links to other files (only anchors inside the page)
    assert not [a for a in p.attrs if a[0] == "src" or (a[0] == "href" and not a[1].startswith("#"))]
    project = load_project(example)
    with Catalog() as catalog:
        for d in list(project.devices.values()) + list(project.connections.values()):
            name = getattr(d, "device_name", None) or d.link_name
            record = catalog.get(name)
            for field in record.values:
                r = record.default_record(field)
                if r is not None and r.value is not None and field not in d.overrides:
                    assert _value_text(r.value, r.unit) in text, (name, field)
            for field, value in d.overrides.items():
                r = record.default_record(field)
                assert "project override" in text and _value_text(value, r.unit if r else "") in text
    assert f"devices.db SHA-256 {__import__('hashlib').sha256(devices_db.read_bytes()).hexdigest()}" in text
    assert "user database SHA-256" in text and "gpumodeler report" in text
    for sw in project.sweeps.values():
        assert sw.id in text
    for app in project.applications.values():
        assert app.name in text and "makespan" in text
    # the same project gives the same bytes
    assert main(["report", str(example), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == html


def test_report_needs_a_writable_output(capsys, tmp_path):
    code = main(["report", str(EXAMPLES[0]), "-o", str(tmp_path / "missing" / "r.html")])
    err = capsys.readouterr().err
    assert code == 2 and "does not exist" in err and len(err.strip().splitlines()) == 1
