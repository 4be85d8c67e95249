"""The kernel import and measurement dialogs never send the user to a command-line option:
the core's messages that name one are said in the dialog's own words."""
from __future__ import annotations

import re

import pytest

from gpumodeler.core.errors import ModelError
from gpumodeler.core.kernel.sass.latencies import table_for_architecture
from gpumodeler.core.measurements.importer import import_text
from gpumodeler.ui.kernel_editor.import_dialog import dialog_words
from gpumodeler.ui.measurements.dialog import file_words

#: a gpumodeler option (nvprof's and Nsight Compute's own "--csv" name the file to make)
FLAG = re.compile(r"--(?!csv)[a-z]")


@pytest.mark.parametrize("message", [
    "the listing holds code for several architectures (sm_80, sm_90); choose one with --arch",
    "a .cu needs the architecture to compile for, e.g. --arch sm_90",
    "the listing has 2 functions; choose one with --function: a, b",
    "no Maxwell latency table in the device database: name one with --latency-table, or give "
    "graph/sweep --table",
])
def test_import_messages_name_the_dialogs_fields(message):
    assert FLAG.search(message)
    words = dialog_words(message)
    assert not FLAG.search(words), words


def test_the_latency_table_note_names_no_option():
    class Table:
        architecture = "Hopper"
    _key, note = table_for_architecture("sm_90", {"hopper-a": Table(), "hopper-b-published": Table()})
    assert FLAG.search(note) and not FLAG.search(dialog_words(note))


def test_an_unknown_measurement_format_names_no_option():
    with pytest.raises(ModelError) as caught:
        import_text("a,b\n1,2\n", "x.csv")
    assert FLAG.search(str(caught.value))
    words = file_words(str(caught.value))
    assert not FLAG.search(words) and "timings CSV" in words
