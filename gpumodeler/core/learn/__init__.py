"""Learned predictors beside the analytical models (Amarís 2018 ch. 4) and a hybrid that
learns what the default model misses (docs/learning.md).

Pure numpy: linear regression, linear support-vector regression and random forests
(:mod:`algorithms`), the thesis' feature sets (:mod:`features`), measured rows and their
analytical predictions (:mod:`dataset`), fitted models (:mod:`model`) stored as validated
JSON (:mod:`model_file`), and the leave-one-out protocols (:mod:`evaluate`). Public names
are exported lazily (PEP 562).
"""
from __future__ import annotations

from gpumodeler.core.lazy import lazy_exports

_EXPORTS = {
    'METHODS': 'model',
    'LearnedModel': 'model',
    'fit': 'model',
    'FEATURE_SETS': 'features',
    'Row': 'dataset',
    'build_rows': 'dataset',
    'gpu_names': 'dataset',
    'with_analytical': 'dataset',
    'LEAVE_OUT': 'evaluate',
    'evaluate': 'evaluate',
    'model_from_text': 'model_file',
    'model_to_text': 'model_file',
    'model_to_json': 'model_file',
    'model_from_json': 'model_file',
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_exports(__name__, globals(), _EXPORTS)
