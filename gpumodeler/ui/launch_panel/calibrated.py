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
