"""SystemEditor: the palette and the canvas of the system (devices and links).

The only part of the system editor that changes the project: it turns user intent (drops,
gestures, menu choices) into core commands and pushes them on the document
(architecture: only editors push commands). The model decides; a refusal comes back with a reason,
shown next to the item and (through ``Document.refused``) in the status bar.
"""
from __future__ import annotations

import json
from dataclasses import asdict, replace

from PySide6.QtCore import QMimeData, QPointF, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu, QSplitter, QVBoxLayout, QWidget

from gpumodeler.core.commands import (AddConnection, AddItem, Command, Macro, MoveDevices,
                                      RemoveDevice, RemoveItem)
from gpumodeler.core.errors import ModelError
from gpumodeler.core.project import (LINK_TYPES, Connection, PlacedDevice,
                                     connection_refusal)

from ..binding import DocumentBinding
from .interactions import ConnectDevices, SelectAndMove, UserInteraction
from .items import DeviceItem
from .palette import DevicePalette
from .presentation import Presenter
from .scene import SystemScene
from .view import SystemView

SYSTEM_MIME = "application/x-gpumodeler-system"
PASTE_GAP = 40.0  # between pasted devices and the ones already placed


def fresh_ids(project, prefix: str, n: int) -> list[str]:
    """``n`` ids ``prefix<k>`` used nowhere in the project (for one macro of additions)."""
    taken = (set(project.devices) | set(project.connections) | set(project.kernels)
             | set(project.launches) | set(project.sweeps) | set(project.measurements))
    out, k = [], 1
    while len(out) < n:
        candidate = f"{prefix}{k}"
        if candidate not in taken:
            out.append(candidate)
        k += 1
    return out


class SystemEditor(DocumentBinding, QWidget):
    """Palette + canvas for one document."""

    #: a hint for the status bar (what a gesture expects next, what just happened)
    sig_hint_changed = Signal(str)

    def show_busy_fractions(self, fractions: dict) -> None:
        """Each GPU's compute busy fraction from the Application tab's last run (a gauge on
        the device; devices the application does not use show none)."""
        if self.scene is None:
            return
        for device_id, item in self.scene.device_items.items():
            item.set_busy(fractions.get(device_id))

    def __init__(self, document, parent=None):
        super().__init__(parent)
        self.scene: SystemScene | None = None
        self.view = SystemView(None)
        self.palette = DevicePalette(document.catalog)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.palette)
        self.splitter.addWidget(self.view)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([240, 900])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        self._last_refusal = ""
        self.view.sig_catalog_dropped.connect(self.drop_catalog_entry)
        self.palette.sig_entry_activated.connect(self._palette_activated)
        self.set_document(document)

    def set_document(self, document) -> None:
        """Edit the system of ``document`` (after New or Open): a fresh scene mirrors it."""
        if self.scene is not None and self.scene.interaction is not None:
            self.end_interaction(self.scene.interaction)
        if self.document is not None and document.catalog is not self.document.catalog:
            self.palette.set_catalog(document.catalog)
        super().set_document(document)

    def document_connections(self, document):
        return ((document.refused, self._remember_refusal),)

    def show_project(self) -> None:
        old_scene = self.scene
        self.presenter = Presenter(self.document.catalog)
        self.scene = SystemScene(self.document, self.presenter, self)
        self.scene.default_interaction = SelectAndMove(self)
        self.scene.selectionChanged.connect(self._selection_changed)
        self.scene.sig_context_menu_requested.connect(self._context_menu)
        self.view.setScene(self.scene)
        if old_scene is not None:
            old_scene.deleteLater()

    # ---- helpers
    def hint(self, text: str) -> None:
        self.sig_hint_changed.emit(text)

    def _remember_refusal(self, message: str, item: str) -> None:
        if self.pushing:  # the reason one of our commands was refused
            self._last_refusal = message

    def _selection_changed(self) -> None:
        devices, links = self.scene.selected_device_ids(), self.scene.selected_connection_ids()
        if len(devices) == 1 and not links:
            self.document.select("device", devices[0])
        elif len(links) == 1 and not devices:
            self.document.select("connection", links[0])
        else:
            self.document.select("", "")
        if len(devices) == 2 and not links:
            self.hint("Two devices selected: right-click › Connect with… to join them")

    # ---- adding devices
    def add_device(self, kind: str, name: str, centre: QPointF | None = None) -> str | None:
        """Place catalog device ``name`` (a GPU or host) near ``centre`` (default: the middle
        of the visible canvas), in free space and inside the view; returns its id, or None
        when refused."""
        if centre is None:
            centre = self.view.visible_centre()
        top_left = self.free_spot(centre)
        device_id = fresh_ids(self.project, kind, 1)[0]
        device = PlacedDevice(device_id, kind, name, x=round(top_left.x()), y=round(top_left.y()))
        if not self.push(AddItem("devices", device, text=f"add {name}")):
            return None
        self.scene.select([device_id])
        self.hint(f"Added {name}")
        return device_id

    def free_spot(self, centre: QPointF, gap: float = 24.0) -> QPointF:
        """The top-left corner of a device rectangle nearest ``centre`` that overlaps no
        placed device (with ``gap`` around it) and lies in the visible canvas when there is
        room: candidates on rings of grid steps around ``centre``, nearest first."""
        from PySide6.QtCore import QRectF
        w, h = DeviceItem.WIDTH, DeviceItem.HEIGHT
        visible = self.view.mapToScene(self.view.viewport().rect()).boundingRect().adjusted(8, 8, -8, -8)
        taken = [item.sceneBoundingRect().adjusted(-gap, -gap, gap, gap)
                 for item in self.scene.device_items.values()]

        def clamp(p: QPointF) -> QPointF:  # keep it on screen when the screen can hold it
            x, y = p.x(), p.y()
            if visible.width() >= w:
                x = min(max(x, visible.left()), visible.right() - w)
            if visible.height() >= h:
                y = min(max(y, visible.top()), visible.bottom() - h)
            return QPointF(x, y)

        start = clamp(QPointF(centre.x() - w / 2, centre.y() - h / 2))
        step_x, step_y = w + gap + 16, h + gap + 16  # items draw a little beyond w × h
        best = None
        for ring in range(0, 12):
            for i in range(-ring, ring + 1):
                for j in range(-ring, ring + 1):
                    if max(abs(i), abs(j)) != ring:
                        continue
                    p = QPointF(start.x() + i * step_x, start.y() + j * step_y)
                    rect = QRectF(p.x(), p.y(), w, h)
                    if any(rect.intersects(t) for t in taken):
                        continue
                    inside = visible.contains(rect)
                    score = (not inside, abs(i) + abs(j))
                    if best is None or score < best[0]:
                        best = (score, p)
            if best is not None and not best[0][0]:
                return best[1]
        return best[1] if best is not None else start

    def drop_catalog_entry(self, kind: str, name: str, scene_pos: QPointF) -> bool:
        """A palette entry dropped at ``scene_pos``: a GPU/host is placed there; a link
        dropped on a device starts a link from it (or completes one waiting for it)."""
        if kind in ("gpu", "host"):
            return self.add_device(kind, name, scene_pos) is not None
        target = self.scene.device_at(scene_pos)
        if target is None:
            self.hint("Drop a link on a device")
            return False
        pending = self.scene.interaction
        if isinstance(pending, ConnectDevices) and pending.first != target:
            self.end_interaction(pending)
            return self.connect_devices(pending.first, target, name)
        self.start_link(name, target)
        return True

    def _palette_activated(self, kind: str, name: str) -> None:
        if kind in ("gpu", "host"):
            self.add_device(kind, name)
        elif len(self.scene.selected_device_ids()) == 2:
            self.connect_selected(name)
        else:
            self.hint(f"To add {name}: drag it onto a device, or select two devices and "
                      f"double-click it")

    # ---- links
    def link_type_of(self, link_name: str) -> str:
        try:
            value = self.presenter.record(link_name).value("link_type")
        except ModelError:
            return "other"
        return value if value in LINK_TYPES else "other"

    def connection_refusal(self, a: str, b: str, link_type: str) -> str | None:
        reason = connection_refusal(self.project, a, b, link_type)
        if reason or link_type != "nvlink":
            return reason
        for device_id in (a, b):
            device = self.project.devices[device_id]
            if device.kind == "host" and not self._host_nvlink(device):
                return (f"{device.label or device.device_name} has no NVLink: a host reaches its GPUs "
                        f"over PCIe unless its CPU has NVLink (e.g. NVIDIA Grace, NVLink-C2C); "
                        f"use a PCIe link, or set the host's NVLink field")
        return None

    def _host_nvlink(self, device) -> str:
        """The NVLink a placed host's CPU has ('' when none is known)."""
        if device.overrides.get("nvlink"):
            return str(device.overrides["nvlink"])
        try:
            record = self.document.catalog.get(device.device_name)
            return str(record.value("nvlink") or "") if record is not None else ""
        except (ModelError, LookupError, AttributeError):
            return ""

    def start_link(self, link_name: str, first: str) -> ConnectDevices:
        """Begin drawing ``link_name`` from device ``first``; a click on a device ends it."""
        if self.scene.interaction is not None:
            self.end_interaction(self.scene.interaction)
        interaction = ConnectDevices(self, link_name, self.link_type_of(link_name), first)
        self.scene.interaction = interaction
        self.view.setFocus()
        self.hint(f"Click the device to join with {link_name} (Esc cancels)")
        return interaction

    def end_interaction(self, interaction: UserInteraction) -> None:
        interaction.cancel()
        if self.scene.interaction is interaction:
            self.scene.interaction = None

    def connect_devices(self, a: str, b: str, link_name: str) -> bool:
        """Join devices ``a`` and ``b`` with catalog link ``link_name``. The model refuses
        impossible links; the reason then appears next to ``b`` and in the status bar."""
        link_type = self.link_type_of(link_name)
        connection = Connection(fresh_ids(self.project, "link", 1)[0], link_name, a, b,
                                link_type)
        reason = self.connection_refusal(a, b, link_type) if {a, b} <= set(self.project.devices) else None
        if reason and link_type == "nvlink":  # the catalog's knowledge the model has not
            self.scene.show_message(reason, device_id=b)
            self.hint(reason)
            return False
        if self.push(AddConnection(connection)):
            self.scene.select(connection_ids=[connection.id])
            self.hint(f"Joined with {link_name}")
            return True
        self.scene.show_message(self._last_refusal or "the link was refused", device_id=b)
        return False

    def connect_selected(self, link_name: str) -> bool:
        devices = self.scene.selected_device_ids()
        if len(devices) != 2:
            self.hint("Select exactly two devices to connect")
            return False
        return self.connect_devices(devices[0], devices[1], link_name)

    # ---- moving, deleting
    def move_devices(self, positions: dict, merge_key) -> bool:
        """New positions during a drag; pushes with the drag's merge key (one undo step)."""
        return self.push(MoveDevices(positions, merge_key=merge_key))

    def delete_selection(self) -> bool:
        devices = self.scene.selected_device_ids()
        links = [cid for cid in self.scene.selected_connection_ids()
                 if not {self.project.connections[cid].a,
                         self.project.connections[cid].b} & set(devices)]
        if not devices and not links:
            return False
        commands: list[Command] = [RemoveItem("connections", cid, text="delete link")
                                   for cid in links]
        commands += [RemoveDevice(did) for did in devices]
        n = len(commands)
        text = commands[0].text if n == 1 else f"delete {n} items"
        return self.push(Macro(text, commands))

    # ---- clipboard
    def copy_selection(self) -> bool:
        devices = self.scene.selected_device_ids()
        if not devices:
            return False
        chosen = set(devices)
        links = [c for c in self.project.connections.values() if {c.a, c.b} <= chosen]
        payload = {"devices": [asdict(self.project.devices[d]) for d in devices],
                   "connections": [asdict(c) for c in links]}
        mime = QMimeData()
        mime.setData(SYSTEM_MIME, json.dumps(payload).encode())
        mime.setText(", ".join(self.project.devices[d].device_name for d in devices))
        QGuiApplication.clipboard().setMimeData(mime)
        self.hint(f"Copied {len(devices)} device(s)")
        return True

    def cut_selection(self) -> bool:
        return self.copy_selection() and self.delete_selection()

    def can_paste(self) -> bool:
        mime = QGuiApplication.clipboard().mimeData()
        return mime is not None and mime.hasFormat(SYSTEM_MIME)

    def paste(self) -> bool:
        """Add copies of the clipboard's devices (new ids, offset positions) and the links
        among them, as one undo step."""
        if not self.can_paste():
            return False
        try:
            payload = json.loads(bytes(QGuiApplication.clipboard().mimeData()
                                       .data(SYSTEM_MIME)).decode())
            devices = [PlacedDevice(**d) for d in payload["devices"]]
            links = [Connection(**c) for c in payload.get("connections", [])]
        except (ValueError, KeyError, TypeError):
            self.hint("The clipboard does not hold devices gpumodeler can paste")
            return False
        dx, dy = self.paste_offset(devices)
        new_ids = {}
        for kind in ("gpu", "host"):
            olds = [d.id for d in devices if d.kind == kind]
            new_ids.update(zip(olds, fresh_ids(self.project, kind, len(olds))))
        link_ids = fresh_ids(self.project, "link", len(links))
        commands: list[Command] = [
            AddItem("devices", replace(d, id=new_ids[d.id], x=d.x + dx, y=d.y + dy),
                    text=f"add {d.device_name}") for d in devices]
        commands += [AddConnection(replace(c, id=lid, a=new_ids[c.a], b=new_ids[c.b]))
                     for c, lid in zip(links, link_ids) if c.a in new_ids and c.b in new_ids]
        if not self.push(Macro(f"paste {len(devices)} device(s)", commands)):
            return False
        self.scene.select(list(new_ids.values()), link_ids)
        return True

    def paste_offset(self, devices) -> tuple[float, float]:
        """How far pasted ``devices`` move from where they were copied: the nearest place
        beside them — to the right, below, to the left, above, then further out — where none
        of them covers a device already on the canvas (their links come along, so they are
        drawn apart from the originals' instead of on top of them)."""
        w, h, gap = DeviceItem.WIDTH, DeviceItem.HEIGHT, PASTE_GAP
        xs, ys = [d.x for d in devices], [d.y for d in devices]
        group_w, group_h = max(xs) - min(xs) + w, max(ys) - min(ys) + h
        taken = [(d.x - gap, d.y - gap, w + 2 * gap, h + 2 * gap) for d in self.project.devices.values()]

        def free(ox: float, oy: float) -> bool:
            return not any(d.x + ox < tx + tw and d.x + ox + w > tx and d.y + oy < ty + th and d.y + oy + h > ty
                           for d in devices for tx, ty, tw, th in taken)

        for ring in range(1, 40):
            for ox, oy in ((ring * (group_w + gap), 0), (0, ring * (group_h + gap)),
                           (-ring * (group_w + gap), 0), (0, -ring * (group_h + gap)),
                           (ring * (group_w + gap), ring * (group_h + gap))):
                if free(ox, oy):
                    return float(round(ox)), float(round(oy))
        return float(round(group_w + gap)), 0.0

    def select_all(self) -> None:
        self.scene.select(list(self.scene.device_items), list(self.scene.connection_items))

    def fit(self) -> None:
        self.view.fit()

    # ---- context menu
    def _context_menu(self, screen_pos, scene_pos) -> None:
        menu = self.build_context_menu()
        menu.exec(screen_pos)

    def build_context_menu(self) -> QMenu:
        """The canvas menu for the current selection (also used by tests)."""
        menu = QMenu(self)
        menu.setToolTipsVisible(True)
        devices = self.scene.selected_device_ids()
        connect = menu.addMenu("Connect with…")
        connect.setToolTipsVisible(True)
        if len(devices) == 2:
            self._fill_connect_menu(connect, devices[0], devices[1])
        else:
            connect.setEnabled(False)
            connect.menuAction().setToolTip("Select two devices to connect them")
        menu.addSeparator()
        has_selection = bool(devices or self.scene.selected_connection_ids())
        for text, slot, enabled in (("Cut", self.cut_selection, bool(devices)),
                                    ("Copy", self.copy_selection, bool(devices)),
                                    ("Paste", self.paste, self.can_paste()),
                                    ("Delete", self.delete_selection, has_selection)):
            action = menu.addAction(text, slot)
            action.setEnabled(enabled)
        menu.addSeparator()
        menu.addAction("Fit view", self.fit)
        return menu

    def _fill_connect_menu(self, menu: QMenu, a: str, b: str) -> None:
        catalog = self.document.catalog
        links = catalog.list("link") if catalog is not None else []
        families: dict[str, QMenu] = {}
        for summary in links:
            family = summary.family or "Other links"
            if family not in families:
                families[family] = menu.addMenu(family)
                families[family].setToolTipsVisible(True)
            action = families[family].addAction(summary.name)
            reason = self.connection_refusal(a, b, self.link_type_of(summary.name))
            if reason:
                action.setEnabled(False)
                action.setToolTip(reason)
            action.triggered.connect(lambda checked=False, n=summary.name, x=a, y=b:
                                     self.connect_devices(x, y, n))
        for submenu in families.values():
            if not any(act.isEnabled() for act in submenu.actions()):
                submenu.menuAction().setToolTip("none of these can join the two devices")
