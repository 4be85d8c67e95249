"""Tensor-core work of a SASS MMA instruction: shape, data-type class, multiply-adds per warp.

The shape and the operand types of a tensor-core instruction are written in its mnemonic's
modifiers (checked on the listings nvcc 13.0 writes for sm_75 … sm_120, committed as
``resources/kernels/sass/mma_shapes.*``, ``wgmma_shapes.sm_90a`` and ``tcgen05_mma.sm_100a``
from ``resources/kernels/src/``):

=============================  =======================  =====================================
SASS                           PTX it comes from        decoded
=============================  =======================  =====================================
``HMMA.16816.F32``             mma m16n8k16 f16→f32     m16 n8 k16, ``fp16_fp32acc``
``HMMA.1688.F16``              mma m16n8k8 f16→f16      m16 n8 k8, ``fp16``
``HMMA.16816.F32.BF16``        mma … bf16→f32           ``bf16``
``HMMA.1688.F32.TF32``         mma m16n8k8 tf32         ``tf32``
``HMMA.884.F32.F32.STEP0``     mma m8n8k4 (sm_70/75)    one of 4 steps (2 with .F16): ``fp16*``
``IMMA.16832.S8.S8``           mma m16n8k32 s8          ``int8`` (``U8`` likewise)
``IMMA.8832.S4.S4``            mma m8n8k32 s4           ``int4``
``BMMA.88128.XOR.POPC``        mma m8n8k128 b1          ``int1``
``DMMA.884``, ``DMMA.8x8x4``   mma m8n8k4 f64           ``fp64``
``QMMA.16832.F32.E4M3.E4M3``   mma m16n8k32 e4m3→f32    ``fp8_fp32acc`` (``.F16``: ``fp8``)
``HGMMA.64x64x16.F32``         wgmma m64n64k16 f16      warpgroup: a quarter per warp
``HGMMA.64x64x16.F32.BF16``    wgmma … bf16             ``bf16`` (``.TF32``: ``tf32``)
``QGMMA.64x64x32.F32.E4M3…``   wgmma … e4m3             ``fp8_fp32acc``
``IGMMA.64x64x32.S8.S8``       wgmma … s8               ``int8``
=============================  =======================  =====================================

Rules (the PTX ISA, "Warp-level matrix multiply-accumulate instructions" and "Asynchronous
warpgroup level matrix multiply-accumulate"; all chosen, documented and tested here):

* The shape digits are ``M N K`` run together (``16816`` = 16·8·16; M and N are 8 or 16,
  read greedily: ``168256`` = 16·8·256) or written with ``x`` (``64x128x16``).
* ``mma.sync`` is warp-wide: one instruction multiplies an M×K by a K×N matrix, M·N·K
  multiply-adds per warp. ``wgmma`` (``*GMMA``) is warpgroup-wide: the four warps of the
  group each issue the instruction and together compute M·N·K, so M·N·K/4 per warp.
* Volta/Turing ``HMMA.884`` (PTX ``mma.m8n8k4``) runs one 8×8×4 product on each of the
  warp's four quad-pairs (4·256 = 1024 multiply-adds per warp) and is split by ptxas into
  ``STEP`` instructions: four with an F32 accumulator, two with an F16 one (sm_75 listing),
  so a step is 256 or 512 multiply-adds.
* Type class: the accumulator (the first type modifier) and the input type (the last one
  when present, ``F16`` for ``HMMA`` without it). FP16 and FP8 are split by accumulator
  because consumer GPUs run FP32 accumulation at half rate (GA102 and Ada whitepapers).
* Blackwell's ``UTCHMMA``/``UTCQMMA``/``UTCIMMA``/``UTCOMMA`` (PTX ``tcgen05.mma``) carry
  their shape and types in the instruction-descriptor register, which SASS does not show:
  they decode as tensor work of unknown size (``macs_per_warp`` None) and the importer says
  so; the tensor-core bound leaves them out (docs/pipes.md).

Sparse MMA (``.SP``) is decoded like the dense instruction of the same shape (the hardware
skips half of A's zeros; the dense M·N·K is the work a dense rate bounds).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
import re

from gpumodeler.core.kernel.opcodes import base_mnemonic

#: Data-type classes of tensor-core work, each with its own dense rate per SM.
TENSOR_CLASSES = ("fp16", "fp16_fp32acc", "bf16", "tf32", "fp8", "fp8_fp32acc", "int8", "int4",
                  "int1", "fp64")
#: Mnemonics of warpgroup-wide (wgmma) instructions.
_WARPGROUP = {"HGMMA", "IGMMA", "QGMMA", "BGMMA", "OGMMA"}
#: Mnemonics whose shape SASS does not show (tcgen05: in the instruction descriptor).
_DESCRIPTOR_SHAPE = {"UTCHMMA", "UTCIMMA", "UTCQMMA", "UTCOMMA", "UTCMMA", "UTCBMMA"}
_MMA = {"HMMA", "IMMA", "BMMA", "DMMA", "QMMA", "OMMA"} | _WARPGROUP
_SHAPE_X = re.compile(r"^(\d+)X(\d+)X(\d+)$")  # opcodes are upper-cased first
_STEP = re.compile(r"^STEP(\d)$")
_PREDICATE = re.compile(r"^@!?U?P[T0-9]+\s+")


@dataclass(frozen=True)
class MmaWork:
    """What one execution of a tensor-core instruction does for one warp."""

    mnemonic: str
    m: int | None
    n: int | None
    k: int | None
    tensor_class: str | None  # one of TENSOR_CLASSES, None when SASS does not say
    macs_per_warp: float | None  # multiply-adds per warp, None when the shape is unknown
    warpgroup: bool = False

    @property
    def shape(self) -> str | None:
        return None if self.m is None else f"m{self.m}n{self.n}k{self.k}"


def _split_digits(digits: str) -> tuple | None:
    """``16816`` -> (16, 8, 16): M and N are 8 or 16, K the rest."""
    for m in ("16", "8"):
        if digits.startswith(m):
            rest = digits[len(m):]
            for n in ("16", "8"):
                if rest.startswith(n) and len(rest) > len(n):
                    return int(m), int(n), int(rest[len(n):])
    return None


def _shape(token: str) -> tuple | None:
    m = _SHAPE_X.match(token)
    if m:
        return tuple(int(g) for g in m.groups())
    return _split_digits(token) if token.isdigit() else None


def _class(mnemonic: str, types: list) -> str | None:
    """The tensor class from the mnemonic and its type modifiers (accumulator first)."""
    if mnemonic in ("DMMA",):
        return "fp64"
    if mnemonic in ("BMMA", "BGMMA"):
        return "int1"
    if mnemonic in ("IMMA", "IGMMA"):
        ins = [t for t in types if t in ("S8", "U8", "S4", "U4")]
        if not ins:
            return None
        return "int4" if ins[-1] in ("S4", "U4") else "int8"
    acc = types[0] if types else None
    if mnemonic in ("QMMA", "QGMMA"):
        if acc not in ("F16", "F32"):
            return None
        return "fp8" if acc == "F16" else "fp8_fp32acc"
    if mnemonic in ("HMMA", "HGMMA"):
        inp = types[-1] if len(types) > 1 and types[-1] in ("BF16", "TF32", "F16") else "F16"
        if inp == "BF16":
            return "bf16"
        if inp == "TF32":
            return "tf32"
        if acc == "F16":
            return "fp16"
        if acc == "F32":
            return "fp16_fp32acc"
    return None


_TYPES = {"F16", "F32", "BF16", "TF32", "S8", "U8", "S4", "U4", "E4M3", "E5M2", "F64"}


@lru_cache(maxsize=1024)
def decode_mma(opcode: str) -> MmaWork | None:
    """The tensor-core work of a SASS opcode with modifiers, or None when it is not an MMA.

    ``decode_mma('HMMA.16816.F32.BF16')`` -> m16n8k16, class ``bf16``, 2048 per warp."""
    text = _PREDICATE.sub("", opcode.strip().upper())
    if not text:
        return None
    mnemonic = base_mnemonic(text)
    if mnemonic in _DESCRIPTOR_SHAPE:
        return MmaWork(mnemonic, None, None, None, None, None)
    if mnemonic not in _MMA:
        return None
    mods = text.split()[0].split(".")[1:]
    shape = next((s for s in map(_shape, mods) if s is not None), None)
    types = [t for t in mods if t in _TYPES]
    cls = _class(mnemonic, types)
    if shape is None:
        return MmaWork(mnemonic, None, None, None, cls, None, mnemonic in _WARPGROUP)
    m, n, k = shape
    macs = float(m * n * k)
    warpgroup = mnemonic in _WARPGROUP
    if warpgroup:
        macs /= 4.0
    step = next((_STEP.match(t) for t in mods if _STEP.match(t)), None)
    if mnemonic == "HMMA" and (m, n, k) == (8, 8, 4):
        # Volta/Turing mma.m8n8k4: one 8x8x4 per quad-pair (4 per warp), split in steps
        if step is None:
            return MmaWork(mnemonic, m, n, k, cls, None)
        steps = 4 if (types[:1] == ["F32"]) else 2
        macs = 4.0 * m * n * k / steps
    return MmaWork(mnemonic, m, n, k, cls, macs, warpgroup)
