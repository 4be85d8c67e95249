"""File › Import Kernel…: a SASS listing (or a .cu, when nvcc is installed) becomes a kernel
of the project in one undoable step, shown in the kernel editor with its loop variables in
the launch panel; several functions ask for a choice; a bad file changes nothing."""
import shutil
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from gpumodeler.core.commands import UpdateItem
from gpumodeler.ui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]
SASS = ROOT / "resources" / "kernels" / "sass"
SAXPY2 = SASS / "saxpy2.sm_90.sass"
VECTOR_OPS = SASS / "vector_ops.sm_90.sass"
SAXPY2_CU = ROOT / "resources" / "kernels" / "src" / "saxpy2.cu"
EXAMPLE = ROOT / "resources" / "examples" / "saxpy2-gtx970.gpm"
WAIT_MS = 120_000  # a .cu compile on a busy machine


pytestmark = pytest.mark.usefixtures("private_settings")


@pytest.fixture
def window(qtbot, catalog, monkeypatch):
    win = MainWindow(catalog, remember=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    monkeypatch.setattr(win, "ask_save_changes", lambda: "discard")
    yield win
    QApplication.clipboard().clear()


def read(qtbot, dialog, path, arch=None):
    dialog.load(str(path), arch)
    qtbot.waitUntil(lambda: not dialog.is_busy(), timeout=WAIT_MS)


def test_import_a_listing_as_one_undoable_step(window, qtbot):
    stack = window.document.undo_stack
    before = stack.count()
    dialog = window.import_kernel_dialog()
    assert window.import_kernel_action in window.menuBar().actions()[0].menu().actions()
    read(qtbot, dialog, SAXPY2)
    assert dialog.message() == ""
    assert len(dialog.function_choices()) == 1 and not dialog.function_list.isVisible()
    kid = dialog.import_selected()
    assert kid in window.document.project.kernels
    graph = window.document.project.kernels[kid]
    assert graph.name == "saxpy2" and len(graph.instructions) > 10
    assert graph.latency_table is not None  # the device database's Hopper table
    assert "hopper" in window.document.table_for(graph.latency_table).architecture.lower()
    # guard1: the n > 0 branch around the loop; param_0x214: the kernel parameter a, the
    # loop's count (core.kernel.sass.parameter_trips)
    assert set(graph.variables) == {"loop1", "guard1", "param_0x214"}
    assert graph.block_trips == {"loop1": "param_0x214"}
    assert stack.count() == before + 1
    assert stack.undoText() == "import kernel saxpy2 from saxpy2.sm_90.sass"
    # shown in the Kernel tab, the view on the graph, the import's note in the status bar
    assert window.tabs.currentIndex() == 1
    editor = window.kernel_editor
    assert editor.kernel_id == kid and editor.scene.graph is graph
    hint = window.statusBar().currentMessage()
    assert hint.startswith("Imported saxpy2 from saxpy2.sm_90.sass: 30 instructions, 1 loop; "
                           f"latency table {graph.latency_table}"), hint
    assert "edge latencies from the compiler's schedule" in hint
    assert "compiler's schedule" in editor.message_strip.text()  # the full note
    assert "compiler's schedule" in graph.description
    def fitted():  # the whole graph in the view
        shown = editor.view.mapToScene(editor.view.viewport().rect()).boundingRect()
        return shown.contains(editor.scene.itemsBoundingRect().adjusted(3, 3, -3, -3))  # pens
    qtbot.waitUntil(fitted)
    stack.undo()
    assert kid not in window.document.project.kernels and stack.count() == before + 1
    stack.redo()
    assert kid in window.document.project.kernels


def test_loop_variables_appear_in_the_launch_panel(window, qtbot):
    assert window.open_path(str(EXAMPLE), ask=False)
    launch_id = next(iter(window.document.project.launches))
    dialog = window.import_kernel_dialog()
    read(qtbot, dialog, SAXPY2)
    kid = dialog.import_selected()
    assert window.document.push(UpdateItem("launches", launch_id, "use kernel", kernel=kid))
    panel = window.launch_panel
    panel.set_launch(launch_id)
    assert "loop1" in panel._variable_fields
    assert panel._variable_fields["loop1"].placeholderText() == \
        "from param_0x214; param_0x214 not given: 1"
    assert panel._variable_fields["param_0x214"].placeholderText() == \
        "kernel parameter, default 0: not given"


def launched(window, qtbot, listing, function):
    """The example project's first launch set to use ``function`` of ``listing``, imported:
    (the kernel's id, the launch panel showing that launch)."""
    assert window.open_path(str(EXAMPLE), ask=False)
    launch_id = next(iter(window.document.project.launches))
    dialog = window.import_kernel_dialog()
    read(qtbot, dialog, listing)
    assert dialog.choose_function(function)
    kid = dialog.import_selected()
    assert window.document.push(UpdateItem("launches", launch_id, "use kernel", kernel=kid))
    panel = window.launch_panel
    panel.set_launch(launch_id)
    return kid, panel


def test_a_thread_test_variable_says_the_block_sets_it(window, qtbot):
    """A halo stencil's guard on threadIdx.x < 3: the launch panel says its variable comes
    from the launch's block, not the kernel's default."""
    _, panel = launched(window, qtbot, SASS / "thread_guards.sm_86.sass", "_Z12halo_stencilPKfPf")
    assert panel._variable_fields["guard1"].placeholderText() == "from the launch's block"


def test_a_grid_stride_loop_says_the_block_and_grid_set_it(window, qtbot):
    """A grid-stride loop: the launch panel says the launch's block and grid set loop1, and
    that the kernel parameter it runs to is not given; setting it changes the prediction."""
    kid, panel = launched(window, qtbot, SASS / "grid_stride.sm_86.sass", "_Z10stride_intPfPKfi")
    assert window.document.project.kernels[kid].block_trips["loop1"].startswith("max(1, ceil(")
    assert panel._variable_fields["loop1"].placeholderText() == \
        "from param_0x170 and the launch's block and grid; param_0x170 not given: 1"
    field = panel._variable_fields["param_0x170"]
    assert field.placeholderText() == "kernel parameter, default 0: not given"
    assert "grid-stride" in field.toolTip()
    assert "block and grid" in window.kernel_editor._variable_fields["loop1"].toolTip()
    assert "a kernel parameter: the trip count of loop1 reads it" in \
        window.kernel_editor._variable_fields["param_0x170"].toolTip()


def test_a_loop_the_block_counts_says_the_block_sets_it(window, qtbot):
    """A column sum over a tile as wide as the block: its loop runs blockDim.x times, so
    the launch panel says the launch's block sets loop1, and the kernel editor's field
    gives the formula."""
    kid, panel = launched(window, qtbot, SASS / "block_trips.sm_86.sass",
                          "_Z15tile_column_sumPKfPf")
    assert window.document.project.kernels[kid].block_trips == {"loop1": "block_x"}
    assert "block_x" in window.kernel_editor._variable_fields["loop1"].toolTip()
    assert panel._variable_fields["loop1"].placeholderText() == "from the launch's block"


def test_several_functions_ask_for_a_choice(window, qtbot):
    dialog = window.import_kernel_dialog()
    read(qtbot, dialog, VECTOR_OPS)
    choices = dialog.function_choices()
    assert len(choices) == 2 and dialog.function_list.isVisible()
    assert any(c.startswith("void scale<float>") for c in choices)  # demangled
    assert "2 functions" in dialog.message()
    assert dialog.choose_function("_Z7vecadd4P6float4PKS_S2_")  # the mangled name selects too
    kid = dialog.import_selected()
    assert window.document.project.kernels[kid].name == "vecadd4"


def test_import_a_maxwell_nvdisasm_listing(window, qtbot):
    """An nvdisasm listing of a Maxwell cubin (dual-issue braces) imports with its loop and
    the Maxwell table of the device database, as `kernel import` does."""
    dialog = window.import_kernel_dialog()
    read(qtbot, dialog, SASS / "saxpy2.sm_52.nvdisasm.sass")
    assert dialog.message() == ""
    kid = dialog.import_selected()
    graph = window.document.project.kernels[kid]
    assert graph.latency_table == "maxwell-published"
    assert set(graph.variables) == {"loop1", "guard1", "param_0x144"} and len(graph.loops) == 1
    assert any(e.kind == "dual" for e in graph.edges.values())
    assert window.statusBar().currentMessage().startswith(
        "Imported saxpy2 from saxpy2.sm_52.nvdisasm.sass: 32 instructions, 1 loop; latency "
        "table maxwell-published")


def test_binary_garbage_is_a_message_and_changes_nothing(window, qtbot, tmp_path):
    bad = tmp_path / "garbage.sass"
    bad.write_bytes(bytes(range(256)) * 8)
    stack = window.document.undo_stack
    before = (stack.count(), dict(window.document.project.kernels))
    dialog = window.import_kernel_dialog()
    read(qtbot, dialog, bad)
    assert "binary data, not a text listing" in dialog.message()
    assert dialog.function_choices() == [] and not dialog.import_button.isEnabled()
    assert dialog.import_selected() is None
    assert (stack.count(), dict(window.document.project.kernels)) == before
    assert dialog.isVisible()  # the user can choose another file


def test_a_listing_of_another_tool_is_a_message(window, qtbot, tmp_path):
    other = tmp_path / "ptx.txt"
    other.write_text(".version 8.0\n.target sm_90\n.visible .entry f() { ret; }\n")
    dialog = window.import_kernel_dialog()
    read(qtbot, dialog, other)
    assert dialog.message() and dialog.import_selected() is None
    assert window.document.project.kernels == {}


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_compile_a_cu_in_the_background(window, qtbot):
    dialog = window.import_kernel_dialog()
    assert not dialog.arch_combo.isVisible()
    dialog.load(str(SAXPY2_CU), "sm_80")
    assert dialog.is_busy() and dialog.busy.isVisible()
    assert "Compiling saxpy2.cu for sm_80" in dialog.busy_label.text()
    qtbot.waitUntil(lambda: not dialog.is_busy(), timeout=WAIT_MS)
    assert dialog.arch_combo.isVisible() and dialog.message() == "", dialog.message()
    kid = dialog.import_selected()
    graph = window.document.project.kernels[kid]
    assert graph.name == "saxpy2" and "loop1" in graph.variables
    assert "ampere" in window.document.table_for(graph.latency_table).architecture.lower()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_a_cu_that_does_not_compile_shows_nvccs_message(window, qtbot, tmp_path):
    bad = tmp_path / "broken.cu"
    bad.write_text("__global__ void f(float *x) { x[0] = undefined_name; }\n")
    dialog = window.import_kernel_dialog()
    read(qtbot, dialog, bad, "sm_90")
    assert "undefined_name" in dialog.message()
    assert len(dialog.message().splitlines()) <= 5  # trimmed
    assert window.document.project.kernels == {}


def test_no_compiler_says_what_to_install(window, qtbot, monkeypatch):
    from gpumodeler.core.kernel.sass import toolchain
    monkeypatch.setattr(toolchain.shutil, "which", lambda name: None)
    monkeypatch.setattr(toolchain, "_search_dirs", lambda: [])
    dialog = window.import_kernel_dialog()
    read(qtbot, dialog, SAXPY2_CU, "sm_90")
    assert "nvcc not found" in dialog.message() and "CUDA Toolkit" in dialog.message()
    assert window.document.project.kernels == {}


def test_a_cu_whose_folder_cannot_reach_nvcc_safely_is_a_message(window, qtbot, tmp_path,
                                                                   monkeypatch):
    """Where no link to the source's folder can be made and its path holds characters nvcc's
    shell would read, the import is refused with a message; nothing runs, nothing changes."""
    from gpumodeler.core.kernel.sass import toolchain
    ran = []

    def no_link(*args, **kwargs):
        raise OSError(1, "Operation not permitted")
    monkeypatch.setattr(toolchain.os, "symlink", no_link)
    monkeypatch.setattr(toolchain, "_spawn", lambda argv, *a, **kw: ran.append(argv))
    monkeypatch.setattr(toolchain, "find_tool", lambda name, required=True: str(tmp_path / name))
    folder = tmp_path / "k $(touch PWNED)"
    folder.mkdir()
    (folder / "k.cu").write_text(SAXPY2_CU.read_text())
    dialog = window.import_kernel_dialog()
    read(qtbot, dialog, folder / "k.cu", "sm_90")
    assert "cannot compile k.cu" in dialog.message() and "move it to a folder" in dialog.message()
    assert ran == [] and dialog.import_selected() is None
    assert window.document.project.kernels == {} and dialog.isVisible()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_a_cu_with_a_hostile_name_is_compiled_as_a_plain_file(window, qtbot, tmp_path):
    hostile = tmp_path / '--options-file=o.cu $(touch PWNED) `touch PWNED` "q.cu'
    hostile.write_text(SAXPY2_CU.read_text())
    dialog = window.import_kernel_dialog()
    read(qtbot, dialog, hostile, "sm_80")
    assert dialog.message() == "", dialog.message()
    kid = dialog.import_selected()
    assert window.document.project.kernels[kid].name == "saxpy2"
    assert not list(tmp_path.rglob("PWNED"))


def test_a_cu_waits_for_the_architecture_and_defaults_to_the_projects_gpu(example_window, window,
                                                                          tmp_path, monkeypatch):
    """Entering a .cu's name compiles nothing (the architecture is chosen first, then
    Compile); the chooser starts at the project's GPU (the example's GTX 970: sm_52) and offers
    the Maxwell and Pascal architectures."""
    from gpumodeler.ui.kernel_editor import import_dialog
    started = []
    monkeypatch.setattr(import_dialog, "in_background", lambda job: started.append(job))
    assert window.import_kernel_dialog().arch_combo.currentData() == "sm_90"   # no GPU
    dialog = example_window.import_kernel_dialog()
    assert dialog.arch_combo.currentData() == "sm_52"
    offered = [dialog.arch_combo.itemData(i) for i in range(dialog.arch_combo.count())]
    assert {"sm_50", "sm_52", "sm_60", "sm_61", "sm_90"} <= set(offered)
    source = tmp_path / "k.cu"
    source.write_text(SAXPY2_CU.read_text())
    dialog.path_edit.setText(str(source))
    dialog.path_edit.editingFinished.emit()
    assert started == [] and "Compile" in dialog.message()
    dialog.arch_combo.setCurrentIndex(dialog.arch_combo.findData("sm_80"))
    dialog.read_button.click()
    assert [(job.path, job.arch) for job in started] == [(str(source), "sm_80")]


def test_the_architecture_follows_the_compute_capability():
    from gpumodeler.ui.kernel_editor.import_dialog import arch_of_compute_capability
    assert arch_of_compute_capability("8.9") == "sm_89"
    assert arch_of_compute_capability(5.2) == "sm_52"
    assert arch_of_compute_capability("6.1") == "sm_61"
    assert arch_of_compute_capability("8.8") == "sm_87"      # the highest below, same major
    assert arch_of_compute_capability("3.5") is None and arch_of_compute_capability("x") is None


def test_the_sweep_choice_follows_a_kernel_switch(window, qtbot):
    """The sweep's variable list is the launch's kernel's: switching the kernel drops the old
    kernel's loop variable from it, and the range shown is the new choice's, not the old
    variable's; a guard is named as a guard, not as a loop variable."""
    from gpumodeler.ui.launch_panel.ranges import default_range
    assert window.open_path(str(EXAMPLE), ask=False)
    project = window.document.project
    launch_id = next(iter(project.launches))
    saxpy = project.launches[launch_id].kernel
    dialog = window.import_kernel_dialog()
    read(qtbot, dialog, SAXPY2)
    kid = dialog.import_selected()
    assert window.document.push(UpdateItem("launches", launch_id, "use kernel", kernel=kid,
                                           variables={}))
    panel = window.launch_panel
    panel.set_launch(launch_id)
    sweep = panel.sweep
    labels = {sweep.variable_combo.itemData(i): sweep.variable_combo.itemText(i)
              for i in range(sweep.variable_combo.count())}
    assert labels["loop1"] == "loop1 (loop variable)" and labels["guard1"] == "guard1 (guard)"
    sweep.set_variable("loop1")
    sweep.from_edit.setText("5")
    sweep.to_edit.setText("77")
    assert window.document.push(UpdateItem("launches", launch_id, "use kernel", kernel=saxpy))
    panel.set_launch(launch_id)
    assert sweep.variable_combo.findData("loop1") < 0
    assert sweep.variable == "block_size"
    launch = project.launches[launch_id]
    r = default_range("block_size", launch, project.kernels[saxpy])
    assert (sweep.from_edit.text(), sweep.to_edit.text()) == (str(r.lo), str(r.hi))
    # a choice the new kernel also has keeps the user's range
    sweep.set_variable("a")
    sweep.from_edit.setText("3")
    assert window.document.push(UpdateItem("launches", launch_id, "edit", lam=1.0))
    panel.set_launch(launch_id)
    assert sweep.variable == "a" and sweep.from_edit.text() == "3"
