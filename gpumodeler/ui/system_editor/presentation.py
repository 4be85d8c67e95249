"""What the canvas shows for a placed device or a connection: title, key specs, problems.

The scene asks a :class:`Presenter` to turn a model object into the texts its dumb items
display; the presenter resolves catalog names (cached) and applies the project's overrides.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtGui import QIcon

from gpumodeler.core.errors import ModelError
from gpumodeler.ui.device_fields import override_key
from gpumodeler.ui.icons import icon
from gpumodeler.ui.units import format_quantity


@dataclass(frozen=True)
class ItemView:
    title: str
    subtitle: str
    tooltip: str = ""
    problem: str = ""
    icon: QIcon | None = None


class Presenter:
    """Texts for the items of one catalog (``catalog`` may be None: no database open)."""

    def __init__(self, catalog):
        self.catalog = catalog
        self._records: dict[str, object] = {}

    def record(self, name: str):
        """The catalog record of ``name``; raises ModelError (not found, no database)."""
        if name not in self._records:
            if self.catalog is None:
                raise ModelError("no device database is open")
            self._records[name] = self.catalog.get(name)
        return self._records[name]

    def forget(self) -> None:
        """Drop the cached records (the device database changed)."""
        self._records.clear()

    def value(self, record, overrides: dict, field: str):
        key = override_key(record.kind, field)
        return overrides[key] if key in overrides else record.value(field)

    def device_view(self, device) -> ItemView:
        title = device.label or device.device_name
        try:
            record = self.record(device.device_name)
        except ModelError as exc:
            return ItemView(title, "", problem=f"not in the device database ({exc})",
                            icon=icon(device.kind))
        if record.kind != device.kind:
            return ItemView(title, "", problem=f"the database lists it as a {record.kind}",
                            icon=icon(device.kind))
        v = lambda f: self.value(record, device.overrides, f)  # noqa: E731
        parts = []
        if device.kind == "gpu":
            if v("sms") is not None:
                parts.append(f"{v('sms')} SMs")
            if v("sm_clock_hz") is not None:
                parts.append(format_quantity(v("sm_clock_hz"), "Hz"))
            if v("compute_capability"):
                parts.append(f"cc {v('compute_capability')}")
        else:
            cpu = v("cpu")
            if cpu:
                parts.append(str(cpu).replace("Intel Core ", "").replace("AMD ", ""))
            if v("cores") is not None:
                parts.append(f"{v('cores')} cores")
            if v("memory_size_bytes") is not None:
                parts.append(format_quantity(v("memory_size_bytes"), "B"))
        tip = [record.name]
        if device.label and device.label != record.name:
            tip.insert(0, device.label)
        if record.family:
            tip.append(record.family)
        if device.count > 1:
            tip.append(f"{device.count} of them in this node")
        if device.overrides:
            tip.append("overridden here: " + ", ".join(sorted(device.overrides)))
        return ItemView(title, " · ".join(parts) or record.family or "", "\n".join(tip),
                        icon=icon(device.kind))

    def connection_view(self, connection) -> ItemView:
        # The canvas label stays short (it sits between two boxes): "PCIe 3.0 x16" for
        # "PCIe 3.0 x16 (Gajger GTX 970 testbed)"; the full name is in the tooltip.
        title = connection.label or re.sub(r"\s*\(.*\)$", "", connection.link_name)
        try:
            record = self.record(connection.link_name)
        except ModelError as exc:
            return ItemView(title, "not in the device database", str(exc), problem=str(exc))
        bandwidth = self.value(record, connection.overrides, "bandwidth_bytes_per_s")
        subtitle = format_quantity(bandwidth, "B/s") if bandwidth is not None else "? GB/s"
        tip = [record.name, f"{subtitle} per direction" if bandwidth is not None
               else "bandwidth unknown"]
        if connection.overrides:
            tip.append("overridden here: " + ", ".join(sorted(connection.overrides)))
        return ItemView(title, subtitle, "\n".join(tip))
