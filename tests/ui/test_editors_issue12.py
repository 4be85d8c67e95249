"""Desktop conventions, the editors: parallel links drawn apart and each selectable, new devices in
free space inside the view, generic hosts with their PCIe generation, NVLink refused to a
host without it, GPU families in architecture order, a launch on a GPU of another
architecture than its kernel's latency table warns and offers the GPU's table."""
import pytest
from PySide6.QtWidgets import QApplication

from gpumodeler.core.commands import UpdateItem
from gpumodeler.core.project import Project
from gpumodeler.ui.document import Document
from gpumodeler.ui.launch_panel.panel import LaunchPanel
from gpumodeler.ui.system_editor import SystemEditor

GPU, HOST = "GeForce GTX 970", "Gajger GTX 970 testbed host"
PCIE_A, PCIE_B = "PCIe 3.0 x16 (Gajger GTX 970 testbed)", "PCIe 3.0 x16"


@pytest.fixture
def editor(qtbot, catalog):
    widget = SystemEditor(Document(Project("test"), catalog))
    qtbot.addWidget(widget)
    widget.resize(1100, 700)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    QApplication.clipboard().clear()


def test_parallel_links_are_drawn_apart_and_each_selectable(editor):
    gpu = editor.add_device("gpu", GPU)
    host = editor.add_device("host", HOST)
    assert editor.connect_devices(host, gpu, PCIE_A)
    # a second PCIe link between the same pair is refused by the model (one per type), so
    # the parallel one is an NVLink-free second kind: a network link is refused too; use
    # two GPUs, which may share both PCIe (through a switch) and NVLink
    gpu2 = editor.add_device("gpu", GPU)
    assert editor.connect_devices(gpu, gpu2, PCIE_B)
    assert editor.connect_devices(gpu, gpu2, "NVLink 1.0 (one link)")
    ids = [c.id for c in editor.document.project.connections.values() if {c.a, c.b} == {gpu, gpu2}]
    items = [editor.scene.connection_items[i] for i in ids]
    mids = [item.line().center() for item in items]
    assert (mids[0] - mids[1]).manhattanLength() >= 20
    for item, cid in zip(items, ids):
        point = item.line().pointAt(0.15)  # on the line, away from the labels
        hit = [i for i in editor.scene.items(point) if i in items]
        assert hit and hit[0] is item, f"{cid} cannot be picked where it is drawn"


def test_new_devices_go_to_free_space_inside_the_view(editor):
    ids = [editor.add_device("gpu", GPU) for _ in range(4)]
    rects = [editor.scene.device_items[i].sceneBoundingRect() for i in ids]
    for i in range(len(rects)):
        for j in range(i + 1, len(rects)):
            assert not rects[i].intersects(rects[j])
    visible = editor.view.mapToScene(editor.view.viewport().rect()).boundingRect()
    assert all(visible.contains(r) for r in rects), (visible, rects)
    # a drop at the very edge lands wholly inside the view
    edge = visible.topLeft()
    dropped = editor.add_device("gpu", GPU, edge)
    assert visible.contains(editor.scene.device_items[dropped].sceneBoundingRect())


def test_generic_hosts_and_nvlink_to_a_host(editor):
    hosts = {name for _, name in editor.palette.entries("host")}
    assert {"Workstation: Intel Core i9-14900K (PCIe 5.0)", "Server: Intel Xeon Platinum 8480+ (PCIe 5.0)",
            "NVIDIA Grace CPU (NVLink-C2C)"} <= hosts
    record = editor.document.catalog.get("Workstation: Intel Core i9-14900K (PCIe 5.0)")
    assert record.value("pcie_generation") == "5.0"
    assert record.default_record("pcie_generation").provenance == "vendor"
    gpu = editor.add_device("gpu", GPU)
    host = editor.add_device("host", "Server: Intel Xeon Platinum 8480+ (PCIe 5.0)")
    depth = editor.document.undo_stack.count()
    assert not editor.connect_devices(host, gpu, "NVLink 4.0 (one link)")
    assert editor.document.undo_stack.count() == depth
    assert "no NVLink" in editor.scene.message()
    grace = editor.add_device("host", "NVIDIA Grace CPU (NVLink-C2C)")
    assert editor.connect_devices(grace, gpu, "NVLink 4.0 (one link)")


def test_gpu_families_in_architecture_order(editor):
    names = [n for _, n in editor.palette.entries("gpu")]
    order = ["GeForce 8800 GTX", "GeForce GTX 480", "GeForce GTX 680", "GeForce GTX 970",
             "GeForce GTX 1080 Ti", "Tesla V100 SXM2 16 GB", "A100 SXM4 40 GB", "H100 SXM5 80 GB"]
    positions = [names.index(n) for n in order]
    assert positions == sorted(positions)


def test_launch_on_another_architecture_warns_and_offers_the_gpus_table(qtbot, catalog, example_project):
    doc = Document(example_project(), catalog)
    panel = LaunchPanel(doc)
    qtbot.addWidget(panel)
    assert panel.table_warning.isHidden()  # Maxwell table, GTX 970: no warning
    gpu = next(d for d in doc.project.devices.values() if d.kind == "gpu")
    assert doc.push(UpdateItem("devices", gpu.id, text="swap GPU", device_name="Tesla K40"))
    panel.refresh()
    assert not panel.table_warning.isHidden() and "Kepler" in panel.table_warning.text()
    assert "Kepler" in panel.table_button.text()
    panel.table_button.click()
    kernel = doc.project.kernels[doc.project.launches[panel.launch_id].kernel]
    assert kernel.latency_table == "kepler-gajger"
    assert doc.undo_stack.undoText() == "use the GPU's latency table"
    panel.refresh()
    assert panel.table_warning.isHidden()
    panel.sweep.cancel()
