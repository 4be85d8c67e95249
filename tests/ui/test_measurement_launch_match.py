"""File › Import Measurements…: the λ fit and the measured points are of the launch's GPU
and kernel. A file of another GPU or kernel (a Tesla K40c vectorAdd profile against the GTX
970 saxpy2 launch) is used only when the user says so in a question naming both sides;
names written the profilers' ways (device index, vendor word, parameter list) match."""
import pytest
from PySide6.QtCore import QTimer

from gpumodeler.db.calibrations import list_calibrations

LAUNCH_GPU = "GeForce GTX 970"


@pytest.fixture
def window(example_window):
    return example_window


def _profile(path, kernel: str, gpu: str, times=(1.1e-3, 2.3e-3, 4.4e-3)):
    """A timings CSV: three launches of ``kernel`` on ``gpu``, as a profiler names them."""
    lines = ["kind,name,direction,size,size_unit,grid,block,time,unit,gpu,memory_kind,registers"]
    for k, t in enumerate(times):
        lines.append(f"kernel,\"{kernel}\",,,,{4096 * 2 ** k},256,{t!r},s,{gpu},,8")
    path.write_text("\n".join(lines) + "\n")
    return path


def _answer(dialog, button_text: str | None, asked: list):
    """When the dialog asks (a modal question), note the question and press the button
    whose text starts with ``button_text`` (None: Cancel)."""
    def press():
        box = dialog.mismatch_box
        if box is None:
            return
        asked.append(box.text() + "\n" + box.informativeText())
        for b in box.buttons():
            text = b.text().replace("&", "")
            if (button_text is None and text == "Cancel") or \
                    (button_text is not None and text.startswith(button_text)):
                b.click()
                return
        box.reject()
    QTimer.singleShot(0, press)


def _k40_dialog(window, tmp_path):
    path = _profile(tmp_path / "k40.csv", "vectorAdd(float const*, float const*, float*, int)",
                    "Tesla K40c")
    dialog = window.import_measurements_dialog(str(path))
    assert dialog is not None and dialog.launch_box.currentText() == "Fig. 5.24"
    return dialog


def test_another_gpu_and_kernel_are_named_and_refused_when_declined(window, tmp_path, catalog):
    dialog = _k40_dialog(window, tmp_path)
    shown = dialog.match_label.text()
    assert "Tesla K40c" in shown and LAUNCH_GPU in shown
    assert "vectorAdd" in shown and "saxpy2" in shown
    asked: list = []
    _answer(dialog, None, asked)
    assert dialog.calibrate_lambda() is None
    [question] = asked
    for name in ("Tesla K40c", LAUNCH_GPU, "vectorAdd", "saxpy2"):
        assert name in question
    assert list_calibrations(catalog, LAUNCH_GPU, "kernel") == []
    assert "Nothing done" in dialog.message.text() and "Tesla K40c" in dialog.message.text()

    before = dict(window.document.project.measurements)
    _answer(dialog, None, asked)
    assert dialog.add_points() == 0
    assert len(asked) == 2 and "vectorAdd" in asked[1]
    assert window.document.project.measurements == before
    assert window.document.undo_stack.count() == 0


def test_another_gpu_is_used_only_by_an_explicit_choice(window, tmp_path, catalog):
    dialog = _k40_dialog(window, tmp_path)
    asked: list = []
    _answer(dialog, "Fit λ and save it anyway", asked)
    saved = dialog.calibrate_lambda()
    assert len(asked) == 1 and saved is not None, dialog.message.text()
    assert saved.device == LAUNCH_GPU
    _answer(dialog, "Add them as measured points anyway", asked)
    assert dialog.add_points() == 3 and len(asked) == 2
    assert window.document.undo_stack.count() == 1


def test_a_kernel_of_the_launch_on_another_gpu_is_asked_about(window, tmp_path):
    path = _profile(tmp_path / "titan.csv", "saxpy2(float*, float*, float)", "GeForce GTX TITAN X")
    dialog = window.import_measurements_dialog(str(path))
    assert "GeForce GTX TITAN X" in dialog.match_label.text()
    assert "kernel" not in dialog.match_label.text()   # the kernel is the launch's
    asked: list = []
    _answer(dialog, None, asked)
    assert dialog.add_points() == 0 and len(asked) == 1
    assert not window.document.project.measurements


@pytest.mark.parametrize("kernel, gpu", [
    ("saxpy2(float*, float*, float)", "GeForce GTX 970"),
    ("void saxpy2(float*, float*, float)", "GeForce GTX 970 (0)"),
    ("saxpy2", "NVIDIA GeForce GTX 970"),
    ("saxpy2(int, float)", "GTX 970"),                      # an alias in the database
])
def test_the_launchs_names_as_profilers_write_them_match(window, tmp_path, kernel, gpu):
    dialog = window.import_measurements_dialog(str(_profile(tmp_path / "p.csv", kernel, gpu)))
    assert dialog.match_label.text() == ""
    asked: list = []
    _answer(dialog, None, asked)           # would decline a question, were one asked
    assert dialog.add_points() == 3
    assert asked == [] and window.document.undo_stack.count() == 1
