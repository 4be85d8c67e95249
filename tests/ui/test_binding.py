"""DocumentBinding: a widget listens to one document at a time and pushes through it."""
from PySide6.QtWidgets import QWidget

from gpumodeler.core.commands import AddItem
from gpumodeler.core.project import PlacedDevice
from gpumodeler.ui.binding import DocumentBinding, current_or_first, item_choices
from gpumodeler.ui.document import Document


class Recorder(DocumentBinding, QWidget):
    def __init__(self, document):
        super().__init__()
        self.events, self.refusals, self.shown, self.done = [], [], 0, 0
        self.set_document(document)

    def document_connections(self, document):
        return ((document.changed, lambda event, payload: self.events.append(event)),
                (document.refused, self._refused))

    def _refused(self, message, item):
        self.refusals.append((message, self.pushing, self.refusal_field))

    def show_project(self):
        self.shown += 1

    def command_done(self):
        self.done += 1


def test_set_document_lets_go_of_the_previous_one(qtbot):
    first, second = Document(), Document()
    w = Recorder(first)
    qtbot.addWidget(w)
    w.set_document(second)
    assert w.document is second and w.project is second.project and w.shown == 2
    first.push(AddItem("devices", PlacedDevice("g1", "gpu", "GeForce GTX 970")))
    assert w.events == []  # the old document is not heard any more
    assert w.push(AddItem("devices", PlacedDevice("g1", "gpu", "GeForce GTX 970")))
    assert w.events == ["devices_added"] and w.done == 1
    third = Document()
    w.set_document(third)
    third.deleteLater()
    qtbot.wait(1)
    w.set_document(first)  # a deleted document's signals are let go of quietly
    assert w.document is first and w.shown == 4


def test_a_refusal_knows_it_answers_the_widget_and_the_field(qtbot):
    w = Recorder(Document())
    qtbot.addWidget(w)
    bad = PlacedDevice("g2", "gpu", "GeForce GTX 970", count=0)
    assert not w.push(AddItem("devices", bad), field="count")
    ((message, pushing, field),) = w.refusals
    assert "count" in message and pushing and field == "count"
    assert not w.pushing and w.refusal_field is None and w.done == 0


def test_item_helpers():
    items = {"k1": type("K", (), {"name": "saxpy2"})()}
    assert item_choices(items) == [("saxpy2  (k1)", "k1")]
    assert current_or_first(items, "k9") == "k1" and current_or_first(items, "k1") == "k1"
    assert current_or_first({}, "k1") is None
