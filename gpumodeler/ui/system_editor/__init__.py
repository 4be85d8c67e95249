"""The system editor: palette, canvas and the gestures that build a multi-GPU system."""
from .editor import SystemEditor

__all__ = ["SystemEditor"]
