"""Whether measured launches belong to a project launch: the GPU and the kernel a
measurement file records against the launch's GPU and kernel, by their names normalised.

A profiler writes a GPU's name its own way (nvprof ``GeForce GTX 970 (0)`` with the device
index, Nsight Compute ``NVIDIA GeForce RTX 2080 Ti``) and a kernel's with its parameters
(``saxpy2(float*, float*, float)``, ``void ns::k<float>(...)``); the device database lists
a GPU's name and aliases (``Tesla K40c`` for the ``Tesla K40``). Two GPU names match when
their normalised forms are equal (case, blanks, the ``NVIDIA`` vendor word and the device
index ignored) or the file's is one of the launch GPU's aliases; two kernel names when
their short forms (no ``void``, namespace, template or parameter list) are equal, ignoring
case. A name the file does not give matches nothing: nobody can tell it is the same.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .profiled import clean_gpu_name


def gpu_key(name: str) -> str:
    """The comparable form of a GPU's name: ``NVIDIA GeForce GTX 970 (0)`` ->
    ``geforce gtx 970``."""
    text = " ".join(clean_gpu_name(str(name or "")).split())
    text = re.sub(r"^nvidia\s+", "", text, flags=re.IGNORECASE)
    return text.casefold()


def kernel_key(name: str) -> str:
    """The comparable form of a kernel's name: ``void ns::saxpy2<float>(float*, int)`` ->
    ``saxpy2``."""
    text = re.sub(r"^\s*(?:(?:void|__global__|static|extern\s+\"C\")\s+)+", "", str(name or ""))
    text = text.split("(", 1)[0].split("<", 1)[0].strip()
    return text.rsplit("::", 1)[-1].strip().casefold()


@dataclass(frozen=True)
class LaunchMatch:
    """How measured launches (``file_gpu``, ``file_kernel`` as the file gives them) fit a
    project launch (``launch_gpu``, ``launch_kernel``)."""

    file_gpu: str
    file_kernel: str
    launch_gpu: str
    launch_kernel: str
    gpu_matches: bool
    kernel_matches: bool

    @property
    def matches(self) -> bool:
        return self.gpu_matches and self.kernel_matches

    def describe(self) -> str:
        """What differs, naming both sides (empty when everything matches)."""
        parts = []
        if not self.gpu_matches:
            parts.append(f"the file's GPU is {_named(self.file_gpu)}, the launch's is "
                         f"{_named(self.launch_gpu)}")
        if not self.kernel_matches:
            parts.append(f"the file's kernel is {_named(self.file_kernel)}, the launch's is "
                         f"{_named(self.launch_kernel)}")
        return "; ".join(parts)


def _named(name: str) -> str:
    return f"'{name}'" if str(name or "").strip() else "not given"


def match_launch(file_gpu: str, file_kernel: str, launch_gpu: str, launch_kernel: str,
                 gpu_aliases=()) -> LaunchMatch:
    """Compare the names a measurement file records with a launch's GPU (its database
    name, ``gpu_aliases`` its aliases) and kernel."""
    wanted = {gpu_key(n) for n in (launch_gpu, *gpu_aliases) if str(n or "").strip()}
    gpu_ok = bool(gpu_key(file_gpu)) and gpu_key(file_gpu) in wanted
    kernel_ok = bool(kernel_key(file_kernel)) and kernel_key(file_kernel) == kernel_key(launch_kernel)
    return LaunchMatch(file_gpu, file_kernel, launch_gpu, launch_kernel, gpu_ok, kernel_ok)


__all__ = ["LaunchMatch", "gpu_key", "kernel_key", "match_launch"]
