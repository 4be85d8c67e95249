"""Kernel graphs from SASS: listings (cuobjdump -sass, nvdisasm) and CUDA sources.

``import_kernel(path, function=None, arch=None) -> KernelGraph`` is the entry point; see
:mod:`.importer` for function discovery (``read_listing``, ``select_function``,
``function_names``) and docs/sass-import.md for the rules. Names are exported lazily.
"""
from __future__ import annotations

from gpumodeler.core.lazy import lazy_exports

_EXPORTS = {
    "Control": "control",
    "FunctionChoiceError": "importer",
    "ImportReport": "build",
    "ListingError": "listing",
    "SassFunction": "listing",
    "SassInstruction": "listing",
    "SassListing": "listing",
    "ToolFailed": "toolchain",
    "ToolMissing": "toolchain",
    "build_graph": "build",
    "decode_control": "control",
    "describe": "importer",
    "function_names": "importer",
    "import_kernel": "importer",
    "import_kernel_with_report": "importer",
    "parse_listing": "listing",
    "read_listing": "importer",
    "select_function": "importer",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, globals(), _EXPORTS)
