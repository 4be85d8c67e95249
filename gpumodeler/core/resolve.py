"""A placed GPU's and a connection's catalog specs with the project's overrides: what
:mod:`gpumodeler.core.pipeline` resolves before predicting, and what an application's
build resolves without predicting anything (a trace's steps replayed from their measured
times: the prediction's modules are then not imported, 0.02 s of the command's start-up).
"""
from __future__ import annotations

from dataclasses import replace

from gpumodeler.core.device import GPUSpec, LinkSpec
from gpumodeler.core.errors import InvalidParameter
from gpumodeler.core.override_types import check_overrides
from gpumodeler.core.project import TRANSFER_CALIBRATION, VIA, Connection, Project


def resolve_gpu(project: Project, device_id: str | None, gpu_lookup) -> GPUSpec:
    """Catalog spec of a placed GPU with the project's overrides applied."""
    placed = project.devices.get(device_id) if device_id is not None else None
    if placed is None or placed.kind != "gpu":
        raise InvalidParameter("choose a GPU for the launch (none is selected)", item="gpu")
    check_overrides(placed.overrides, "gpu", f"device {placed.label or placed.id}", item=placed.id)
    spec = gpu_lookup(placed.device_name)
    return spec.with_overrides(**placed.overrides) if placed.overrides else spec


def transfer_calibration(connection: Connection) -> str | None:
    """The calibration label a connection uses (None: the nominal link, eq. 5.5)."""
    label = connection.overrides.get(TRANSFER_CALIBRATION)
    if label is None:
        return None
    if not isinstance(label, str) or not label.strip():
        raise InvalidParameter(f"link {connection.link_name!r}: {TRANSFER_CALIBRATION} must be the "
                               f"label of a stored link calibration (a non-empty text), got {label!r}",
                               item=connection.id)
    return label


def resolve_link(project: Project, connection_id: str, link_lookup,
                 calibration_lookup=None) -> LinkSpec:
    """Catalog spec of a connection's link with the project's overrides applied. When the
    connection names a calibration (overrides[``transfer_calibration``]),
    ``calibration_lookup(link_name, label) -> LinkSpec`` gives the link carrying that
    calibration's fitted transfer models (the db layer's ``calibrated_link_spec``); it raises
    InvalidParameter when the link has no calibration of that label."""
    conn = project.connections[connection_id].checked()
    overrides = dict(conn.overrides)
    label = transfer_calibration(conn)
    overrides.pop(TRANSFER_CALIBRATION, None)
    overrides.pop(VIA, None)  # the host-side link it passes through: a route, not a value
    if label is None:
        spec = link_lookup(conn.link_name)
    elif calibration_lookup is None:
        raise InvalidParameter(f"link {conn.link_name!r} uses the transfer calibration {label!r}, but "
                               "no calibration store is available here to look it up (labels: unknown); "
                               "clear the link's calibration to use the nominal link", item=conn.id)
    else:
        spec = calibration_lookup(conn.link_name, label)
    return replace(spec, **overrides) if overrides else spec
