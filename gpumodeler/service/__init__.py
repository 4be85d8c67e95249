"""Project evaluation for every front end: the CLI (``gpumodeler project``, ``report``,
``timeline``), the GUI (launch panel, Application tab, File › Export report…) and the HTML
report call this package, so they print, show and write the same numbers.

It resolves a project's devices, links, latency tables and link calibrations in the device
catalog (:mod:`.lookups`), predicts launches (:mod:`.launches`), runs sweeps and
applications and gathers what the report shows (:mod:`.evaluation`, :mod:`.application`,
:mod:`.report`). It imports ``core`` and ``db``, never ``cli``, ``ui``, ``report`` or Qt
(docs/architecture.md).

One :class:`~.evaluation.ProjectEvaluation` analyses each kernel graph once, however many
launches, sweeps and application steps use it.
"""
from __future__ import annotations

from gpumodeler.core.lazy import lazy_exports

_EXPORTS = {
    "catalog_lookups": "lookups", "with_gpu_values": "lookups",
    "ProjectEvaluation": "evaluation",
    "predict_launch": "launches", "transfer_calibration_of": "launches",
    "calibration_text": "launches",
    "pick_application": "application", "run_application": "application",
    "report_data": "report",
}
__getattr__ = lazy_exports(__name__, globals(), _EXPORTS)
__all__ = sorted(_EXPORTS)
