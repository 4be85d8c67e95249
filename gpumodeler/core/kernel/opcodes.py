"""SASS opcode classification: which functional unit executes an instruction and which row
of the latency table gives its register-dependency latency.

Units follow the resources of Volkov's throughput worksheet (§3.6) and Gajger §4.4.3:
``cuda_core`` (FP32/INT32 CUDA cores), ``fp64``, ``sfu``, ``ldst`` (load/store, with a state
space: global, local, shared, constant), ``branch``, ``barrier``, ``exit``, and ``virtual``
(the start and end nodes of a graph). Mnemonics are matched on the part before the first
dot (``IADD.X`` -> ``IADD``) per the CUDA Binary Utilities instruction-set reference.

Choices for opcodes the documents' tables do not list (documented, tested):
``S2R``/``CS2R`` take the ``mov`` latency; Maxwell's ``XMAD`` (16-bit multiply-add executed
natively by the CUDA cores; three of them emulate one 32-bit integer mad) takes ``int_add``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
import re

_PREDICATE = re.compile(r"^@!?U?P[T0-9]+\s+")
UNITS = ("cuda_core", "fp64", "sfu", "tensor", "ldst", "branch", "barrier", "exit", "virtual")
#: Issue pipes of the per-architecture throughput worksheet. ``unit`` says which resource of
#: Volkov's worksheet executes an instruction; ``pipe`` refines ``cuda_core`` into the FP32,
#: INT32 and FP16 pipes that Volta and later architectures issue separately.
PIPES = ("fp32", "int32", "fp16", "tensor", "fp64", "sfu", "ldst", "branch", "barrier", "exit",
         "virtual")
SPACES = ("global", "local", "shared", "constant")


@dataclass(frozen=True)
class OpcodeInfo:
    unit: str
    latency_class: str | None = None  # row of the latency table (non-memory units)
    space: str | None = None  # for ldst
    is_load: bool = False
    pipe: str | None = None  # one of PIPES; None = same as ``unit`` (see :func:`pipe_of`)


def _ops(names, info):
    return {n: info for n in names.split()}


_TABLE: dict[str, OpcodeInfo] = {
    **_ops("FADD FADD32I", OpcodeInfo("cuda_core", "fp32_add")),
    **_ops("FFMA FFMA32I", OpcodeInfo("cuda_core", "fp32_mad")),
    **_ops("FMUL FMUL32I", OpcodeInfo("cuda_core", "fp32_mul")),
    **_ops("FMNMX FSET FSEL FCHK", OpcodeInfo("cuda_core", "fp32_add")),
    **_ops("FSETP ISETP PSETP", OpcodeInfo("cuda_core", "setp")),
    **_ops("IADD IADD3 IADD32I IADD3X ISCADD ISCADD32I LEA XMAD IMNMX ISUB POPC FLO BFE BFI "
           "IABS ISET SEL PRMT", OpcodeInfo("cuda_core", "int_add")),
    **_ops("IMAD IMAD32I IMADSP", OpcodeInfo("cuda_core", "int_mad")),
    **_ops("IMUL IMUL32I", OpcodeInfo("cuda_core", "int_mul")),
    **_ops("LOP LOP3 LOP32I PLOP3", OpcodeInfo("cuda_core", "logic")),
    **_ops("SHL SHR SHF", OpcodeInfo("cuda_core", "shift")),
    **_ops("MOV MOV32I S2R CS2R SHFL I2F F2I I2I F2F NOP", OpcodeInfo("cuda_core", "mov")),
    **_ops("MUFU RRO", OpcodeInfo("sfu", "sfu")),
    **_ops("DADD DFMA DMUL DMNMX DSET DSETP", OpcodeInfo("fp64", "fp64")),
    **_ops("LDG LD", OpcodeInfo("ldst", space="global", is_load=True)),
    **_ops("STG ST RED ATOM ATOMG", OpcodeInfo("ldst", space="global")),
    **_ops("LDS", OpcodeInfo("ldst", space="shared", is_load=True)),
    **_ops("STS ATOMS", OpcodeInfo("ldst", space="shared")),
    **_ops("LDL", OpcodeInfo("ldst", space="local", is_load=True)),
    **_ops("STL", OpcodeInfo("ldst", space="local")),
    **_ops("LDC", OpcodeInfo("ldst", space="constant", is_load=True)),
    **_ops("BRA BRX JMP JMX CAL RET SSY SYNC BSSY BSYNC PBK BRK", OpcodeInfo("branch")),
    **_ops("BAR", OpcodeInfo("barrier")),
    **_ops("EXIT", OpcodeInfo("exit")),
    **_ops("START END", OpcodeInfo("virtual")),
}


@lru_cache(maxsize=4096)  # a kernel repeats few mnemonics many times
def classify(opcode: str) -> OpcodeInfo | None:
    """Unit and latency class of a SASS mnemonic (``'IADD.X'`` -> int_add), or None if unknown."""
    text = _PREDICATE.sub("", opcode.strip().upper())
    base = text.split()[0].split(".")[0] if text else ""
    return _TABLE.get(base)


def pipe_of(info: OpcodeInfo) -> str:
    """The issue pipe of a classified instruction (``cuda_core`` defaults to ``fp32``)."""
    if info.pipe is not None:
        return info.pipe
    return "fp32" if info.unit == "cuda_core" else info.unit
