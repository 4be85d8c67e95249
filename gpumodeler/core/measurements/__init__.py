"""Measurements: importers for nvprof, Nsight Compute and timing CSV files, normalised to
:class:`Measurement` records."""
from gpumodeler.core.measurements.records import DIRECTIONS, KINDS, Measurement

__all__ = ["DIRECTIONS", "KINDS", "Measurement"]
