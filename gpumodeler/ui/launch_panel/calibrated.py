"""“Calibrated for this GPU”: the λ calibrations stored for the launch's GPU (the
calibration store, db/calibrations.py: ``calibrate kernel --save`` or File › Import
Measurements…); choosing one sets the launch's λ (one undoable edit).

The list is read when it opens, so a calibration stored meanwhile shows up without any
wiring into the panel's refresh.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from gpumodeler.core.errors import ModelError

PLACEHOLDER = "choose a stored λ…"


class CalibratedLambdaBox(QComboBox):
    """``panel``: the LaunchPanel (its document, current launch and update_launch)."""

    def __init__(self, panel):
        super().__init__(panel)
        self.panel = panel
        self.setToolTip("λ fitted for this GPU from measured launches and stored in your "
                        "device database; choosing one sets the launch's λ")
        self.addItem(PLACEHOLDER, None)
        self.activated.connect(self.choose)

    def calibrations(self) -> list:
        """The current kernel calibrations of the launch's GPU (empty without one)."""
        panel = self.panel
        document = getattr(panel, "document", None)
        launch = panel.launch if document is not None else None
        catalog = getattr(document, "catalog", None)
        if launch is None or catalog is None or launch.gpu not in panel.project.devices:
            return []
        from gpumodeler.db.calibrations import list_calibrations
        try:
            cals = list_calibrations(catalog, panel.project.devices[launch.gpu].device_name,
                                     "kernel")
        except (ModelError, LookupError):   # a GPU not in the catalog has none
            return []
        return [c for c in cals if c.is_current]

    def refill(self) -> int:
        """Re-read the stored calibrations; returns how many are offered."""
        cals = self.calibrations()
        self.clear()
        self.addItem(PLACEHOLDER if cals else "none stored for this GPU", None)
        for c in cals:
            lam = float(c.parameters["lambda"])
            loo = f" · LOO {c.loo_mape:.3g} %" if c.loo_mape is not None else ""
            self.addItem(f"λ = {lam:.4g} · {c.subject} [{c.label}]{loo}", lam)
            self.setItemData(self.count() - 1, c.describe(), Qt.ItemDataRole.ToolTipRole)
        return len(cals)

    def showPopup(self) -> None:
        self.refill()
        super().showPopup()

    def choose(self, index: int) -> bool:
        """Set the launch's λ to the calibration at ``index``; False for the placeholder."""
        lam = self.itemData(index)
        self.setCurrentIndex(0)
        if lam is None:
            return False
        return self.panel.update_launch("lam", lam=lam)


NOMINAL = "(nominal)"


def transfer_connection(project, launch):
    """The connection the launch's transfers use (the first transfer's, else the GPU's
    host link), or None."""
    if launch is None:
        return None
    for t in launch.transfers:
        if t.connection in project.connections:
            return project.connections[t.connection]
    host = project.host_link_for(launch.gpu) if launch.gpu in project.devices else None
    return host


class CalibratedLinkBox(QComboBox):
    """The link calibrations stored for the launch's transfer link, by label (a memory kind
    or an application); choosing one sets that connection's ``transfer_calibration``
    override (one undoable SetOverride), so predictions use its fitted transfer models;
    “(nominal)” clears it (eq. 5.5 from the link's values). The choice belongs to the
    connection: every launch over that link uses it.

    The stored labels are read when the list opens; :meth:`sync` (the panel's refresh)
    only shows the connection's current choice. A link named after a generic one (``PCIe
    3.0 x16 (Gajger GTX 970 testbed)`` after ``PCIe 3.0 x16``) is also offered the generic
    link's calibrations (marked “from …”); choosing one stores it as the link's own
    (Document.adopt_link_calibration), so the project finds it under its link's name."""

    def __init__(self, panel):
        super().__init__(panel)
        self.panel = panel
        self.setToolTip("transfer models fitted from measured copies on this link and stored in "
                        "your device database (Devices › Calibrate Link from Measurements…); choosing one makes the "
                        "project's transfers over the link use it")
        self.addItem(NOMINAL, None)
        self.activated.connect(self.choose)

    def connection(self):
        panel = self.panel
        if getattr(panel, "document", None) is None:
            return None
        return transfer_connection(panel.project, panel.launch)

    def labels(self) -> dict:
        """label -> the current calibrations of that label the transfer link can use (its
        own, or those of a link it derives from: see :meth:`source`)."""
        conn = self.connection()
        self._sources: dict = {}
        if conn is None:
            return {}
        try:
            cals = self.panel.document.offered_link_calibrations(conn.link_name)
        except (ModelError, LookupError):   # a link not in the catalog has none
            return {}
        out: dict = {}
        for link, c in cals:
            out.setdefault(c.label, []).append(c)
            self._sources[c.label] = link
        return out

    def source(self, label) -> str | None:
        """The link the calibrations labelled ``label`` are stored under (as last listed)."""
        return getattr(self, "_sources", {}).get(label)

    def sync(self) -> None:
        """Show the connection's current choice (no database read)."""
        from gpumodeler.core.project import TRANSFER_CALIBRATION
        conn = self.connection()
        label = conn.overrides.get(TRANSFER_CALIBRATION) if conn is not None else None
        self.setEnabled(conn is not None)
        self.blockSignals(True)
        self.clear()
        self.addItem(NOMINAL if label is None else str(label), label)
        self.blockSignals(False)

    def refill(self) -> int:
        """Re-read the stored labels of the transfer link; returns how many are offered."""
        from gpumodeler.core.project import TRANSFER_CALIBRATION
        conn = self.connection()
        current = conn.overrides.get(TRANSFER_CALIBRATION) if conn is not None else None
        found = self.labels()
        self.blockSignals(True)
        self.clear()
        self.addItem(NOMINAL if found or current else f"{NOMINAL} · none stored for this link", None)
        for label, cals in sorted(found.items()):
            dirs = ", ".join(sorted(c.subject for c in cals))
            loos = [c.loo_mape for c in cals if c.loo_mape is not None]
            loo = f" · LOO {max(loos):.3g} %" if loos else ""
            source = self.source(label)
            origin = f" · from {source}" if conn is not None and source != conn.link_name else ""
            self.addItem(f"{label} · {dirs}{loo}{origin}", label)
            self.setItemData(self.count() - 1, "\n".join(c.describe() for c in cals),
                             Qt.ItemDataRole.ToolTipRole)
        if current is not None and current not in found:
            self.addItem(f"{current} · not stored", current)
        self.setCurrentIndex(max(0, self.findData(current)) if current is not None else 0)
        self.blockSignals(False)
        return len(found)

    def showPopup(self) -> None:
        self.refill()
        super().showPopup()

    def choose(self, index: int) -> bool:
        """Use the calibration at ``index`` on the transfer link (None: the nominal link);
        False when nothing changes."""
        from gpumodeler.core.commands import SetOverride
        from gpumodeler.core.project import TRANSFER_CALIBRATION
        if not 0 <= index < self.count():
            return False
        label = self.itemData(index)
        conn = self.connection()
        if conn is None or conn.overrides.get(TRANSFER_CALIBRATION) == label:
            self.sync()
            return False
        source = self.source(label)
        if label is not None and source is not None and source != conn.link_name:
            try:   # the generic link's calibration becomes this link's own
                self.panel.document.adopt_link_calibration(conn.link_name, source, label)
            except (ModelError, LookupError) as exc:
                self.panel.refuse("transfer_calibration", f"cannot use the calibration of "
                                                          f"{source}: {exc}")
                self.sync()
                return False
        done = self.panel.document.push(SetOverride("connections", conn.id, TRANSFER_CALIBRATION,
                                                    label))
        self.sync()
        return done
