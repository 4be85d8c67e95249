"""The property inspector: catalog parameters of the selected device or link, with
per-project overrides."""
from .inspector import PropertyInspector

__all__ = ["PropertyInspector"]
