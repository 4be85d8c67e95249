"""The resolvers core's pipeline takes (:func:`gpumodeler.core.pipeline.evaluate_launch`),
over the device catalog: a project names devices, links, latency tables and link
calibrations; these turn the names into core's specs."""
from __future__ import annotations


def catalog_lookups(catalog) -> dict:
    """gpu_lookup, link_lookup, table_lookup and calibration_lookup (a project connection's
    ``transfer_calibration``: the stored link calibration of that label) over an open catalog
    (core's resolvers)."""
    from gpumodeler.db.calibrations import calibrated_link_spec
    return {"gpu_lookup": lambda n: catalog.get(n).to_gpu_spec(),
            "link_lookup": lambda n: catalog.get(n).to_link_spec(),
            "table_lookup": catalog.latency_table,
            "calibration_lookup": lambda n, label: calibrated_link_spec(catalog, n, label)}


def with_gpu_values(lookups: dict, **values) -> dict:
    """``lookups`` whose GPUs carry ``values`` (GPUSpec fields, e.g. the CLI's
    ``--launch-overhead``); a value None leaves the catalog's."""
    values = {k: v for k, v in values.items() if v is not None}
    if not values:
        return dict(lookups)
    gpu_lookup = lookups["gpu_lookup"]
    return dict(lookups, gpu_lookup=lambda n: gpu_lookup(n).with_overrides(**values))
