"""Building or showing the Kernel tab never clears a device selected on the System tab (the
inspector kept showing nothing after the tabs were built in the background)."""


def test_a_device_selected_on_the_canvas_stays_selected_when_the_kernel_tab_is_built(
        example_window, qtbot):
    win = example_window
    win.system_editor.scene.select(["gpu1"])
    assert win.document.selected == ("device", "gpu1")
    win.tabs.setCurrentIndex(1)             # the Kernel tab: its editor is built and shown
    win.build_all_tabs()
    qtbot.wait(1)
    assert win.document.selected == ("device", "gpu1")
    assert win.inspector.model.rowCount() > 0


def test_an_instruction_deselected_in_the_kernel_editor_clears_the_document_selection(
        example_window, qtbot):
    win = example_window
    win.tabs.setCurrentIndex(1)
    editor = win.editor(1)
    node = next(iter(editor.scene.node_items))
    editor.scene.node_items[node].setSelected(True)
    assert win.document.selected == ("instruction", node)
    editor.scene.clearSelection()
    assert win.document.selected == ("", "")
