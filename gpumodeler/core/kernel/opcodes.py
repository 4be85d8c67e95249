"""SASS opcode classification: which functional unit executes an instruction, which row
of the latency table gives its register-dependency latency, and which issue pipe it uses.

Units follow the resources of Volkov's throughput worksheet (§3.6) and Gajger §4.4.3:
``cuda_core`` (FP32/INT32 CUDA cores), ``fp64``, ``sfu``, ``tensor``, ``ldst`` (load/store,
with a state space: global, local, shared, constant), ``branch``, ``barrier``, ``exit``, and
``virtual`` (the start and end nodes of a graph). Mnemonics are matched on the part before
the first dot (``IADD.X`` -> ``IADD``) per the CUDA Binary Utilities instruction-set
reference (NVIDIA, "CUDA Binary Utilities", §Instruction Set Reference, the Maxwell/Pascal,
Volta/Turing, Ampere/Ada, Hopper and Blackwell opcode tables), which is also the source of
what each mnemonic does.

Pipes (``OpcodeInfo.pipe``, :func:`pipe_of`) refine ``cuda_core`` into the FP32, INT32 and
FP16 pipes that Volta and later issue separately (Volta/Turing tuning guides; the pipeline
list of NVIDIA's Nsight Compute Kernel Profiling Guide, where integer add/logic/compare run
on the ALU and conversions on the XU, the transcendental-and-conversion unit, the SFU here).

Choices for opcodes the documents' tables do not list (documented, tested):

* ``S2R``/``CS2R``/``S2UR`` take the ``mov`` latency; Maxwell's ``XMAD`` (16-bit
  multiply-add executed natively by the CUDA cores; three of them emulate one 32-bit integer
  mad) takes ``int_add``.
* Uniform-datapath ops (``UIADD3``, ``UMOV``, ``ULDC``, ... Turing and later) take the
  class of their vector counterpart and the ``int32`` pipe; ``ULDC`` and Blackwell's
  ``LDCU`` are constant loads.
* Conversions ``F2F I2F F2I I2I FRND F2FP I2FP F2IP I2IP`` are class ``conversion`` (they were
  ``mov`` before Volta tables had the row); the unpacked ones issue to the ``sfu`` pipe (XU),
  the packed ``F2FP``/``I2FP`` ones to ``fp16``.
* ``SHFL`` is class ``shuffle``; it stays a CUDA-core instruction (unit ``cuda_core``, as
  before) issued to the ``int32`` pipe.
* Tensor-core MMA (``HMMA IMMA DMMA BMMA QMMA HGMMA IGMMA QGMMA BGMMA UTCHMMA ...``) is unit,
  class and pipe ``tensor``; :mod:`gpumodeler.core.kernel.mma` decodes its shape and type.
* Atomics/reductions: ``ATOM``/``ATOMG``/``RED`` global, ``ATOMS`` shared; by default not
  loads (as in earlier versions, so saved graphs keep their meaning); the SASS importer
  marks an atomic that returns a register (``ATOMG.ADD R4, ...``) ``is_load``. ``LDGSTS`` (Ampere asynchronous global->shared copy) and the
  Hopper bulk/TMA copies ``UBLKCP``/``UTMALDG`` are global loads (they read DRAM; the
  data lands in shared memory); ``LDSM`` (shared matrix load) is a shared load.
* Synchronisation that waits for other warps or for memory (``BAR``, ``MEMBAR``, ``DEPBAR``,
  ``ARRIVES``, ``SYNCS``, ``WARPSYNC``, ``ERRBAR``, ``CCTL``, and Hopper's ``WARPGROUP``
  (``WARPGROUP.ARRIVE``/``.DEPBAR``, the fence and wait of PTX ``wgmma``) is unit ``barrier``;
  of these ``DEPBAR``, ``TEXDEPBAR`` and ``LDGDEPBAR`` are a warp's wait on its own
  scoreboards, not a barrier between warps (:data:`SCOREBOARD_WAITS`).
* Maxwell/Pascal opcodes. Every one of the 108 mnemonics of NVIDIA's "Maxwell and Pascal
  Instruction Set" table (CUDA Binary Utilities, §4 "Instruction Set Reference", CUDA 9 to
  12.x editions) is classified; tests/core/test_sass_opcodes.py lists them by the table's
  groups. Of those only Maxwell and Pascal have: ``ICMP`` ("Integer Compare to Zero and
  Select Source") takes ``int_add``, ``CSETP`` ``setp``, ``CSET``/``PSET`` ``logic``,
  ``FCMP`` ("FP32 Compare to Zero and Select Source") ``fp32_add``, ``B2R``/``R2B`` ``mov``;
  texture and surface reads (``TEX TEXS TLD TLDS TLD4 TLD4S TXQ SULD``) are global loads
  (the table's "Texture Instructions"; ``TXQ``, a texture query, is counted with them),
  surface writes and atomics global stores; ``JCAL PRET PCNT CONT PEXIT`` control flow. The
  table's "generic memory" accesses (``LD``, ``ST``, ``ATOM``, ``RED``) are taken as global
  (the choice: a generic address names global memory unless the compiler knew better, in
  which case it would have used ``LDS``/``LDL``). The cache controls ``CCTL CCTLL CCTLT``
  ("Cache Control", "Texture Cache Control") keep unit ``barrier`` but synchronise no warps
  (:data:`CACHE_CONTROLS`).
* The SIMD video instructions (``VMNMX``, ``VADD``, ``VABSDIFF``, ``VMAD``, ``VSET``,
  ``VSHL``, ``VSHR``; ``VSETP`` ``setp``) are *not* in NVIDIA's Maxwell and Pascal table
  (they are in its Kepler table), yet real sm_5x listings carry them (``VMNMX``, an integer
  minimum/maximum): they take ``int_add``. The table also omits ``DEPBAR``, which ptxas
  emits on Maxwell and Pascal (the bundled matmul_tiled sm_52, sm_60 and sm_61 listings;
  see :data:`SCOREBOARD_WAITS`).
* Anything else is unknown: :func:`classify` returns None and the importer keeps the
  instruction, flags it, and gives it unit ``cuda_core`` with no latency class.
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


def _int(cls):
    return OpcodeInfo("cuda_core", cls, pipe="int32")


_TABLE: dict[str, OpcodeInfo] = {
    # FP32 (pipe fp32, the default of cuda_core)
    **_ops("FADD FADD32I", OpcodeInfo("cuda_core", "fp32_add")),
    **_ops("FFMA FFMA32I FFMA2", OpcodeInfo("cuda_core", "fp32_mad")),
    **_ops("FMUL FMUL32I FMUL2", OpcodeInfo("cuda_core", "fp32_mul")),
    **_ops("FMNMX FSET FSEL FCHK FSWZADD FADD2 FMNMX3 FCMP", OpcodeInfo("cuda_core", "fp32_add")),
    **_ops("FSETP", OpcodeInfo("cuda_core", "setp")),
    # INT32 (pipe int32)
    **_ops("ISETP PSETP UISETP", _int("setp")),
    **_ops("IADD IADD3 IADD32I IADD3X ISCADD ISCADD32I LEA XMAD IMNMX ISUB POPC FLO BFE BFI "
           "IABS ISET SEL PRMT BREV BMSK IDP IDP4A IADD2 VIADD VIMNMX VIMNMX3 VIADDMNMX "
           "UIADD3 ULEA USEL UPRMT UFLO UPOPC UBREV UBMSK UIMNMX UVIADD UIABS", _int("int_add")),
    # Maxwell/Pascal integer compare-and-select and the SIMD video instructions
    **_ops("ICMP VMNMX VADD VABSDIFF VABSDIFF4 VMAD VSET VSHL VSHR", _int("int_add")),
    **_ops("VSETP CSETP", _int("setp")),
    **_ops("CSET PSET", _int("logic")),
    **_ops("B2R R2B", _int("mov")),
    **_ops("IMAD IMAD32I IMADSP UIMAD", _int("int_mad")),
    **_ops("IMUL IMUL32I", _int("int_mul")),
    **_ops("LOP LOP3 LOP32I PLOP3 ULOP ULOP3 ULOP32I UPLOP3 R2P P2R R2UR UR2UP UP2UR "
           "VOTE VOTEU", _int("logic")),
    **_ops("SHL SHR SHF USHF USHL USHR", _int("shift")),
    **_ops("MOV MOV32I UMOV NOP CS2R S2R S2UR LEPC GETLMEMBASE SETLMEMBASE USETMAXREG",
           _int("mov")),
    **_ops("SHFL", _int("shuffle")),
    **_ops("MATCH REDUX CREDUX ELECT", _int("logic")),
    # conversions
    **_ops("F2F I2F F2I I2I FRND I2FP F2IP",
           OpcodeInfo("cuda_core", "conversion", pipe="sfu")),
    **_ops("F2FP I2IP", OpcodeInfo("cuda_core", "conversion", pipe="fp16")),
    # FP16 / BF16 packed math
    **_ops("HADD2 HFMA2 HMUL2 HMNMX2 HSET2 HSETP2",
           OpcodeInfo("cuda_core", "fp16", pipe="fp16")),
    # SFU / XU
    **_ops("MUFU RRO", OpcodeInfo("sfu", "sfu")),
    # FP64
    **_ops("DADD DFMA DMUL DMNMX DSET DSETP", OpcodeInfo("fp64", "fp64")),
    # tensor cores
    **_ops("HMMA IMMA DMMA BMMA HGMMA IGMMA BGMMA QGMMA QMMA OMMA UTCHMMA UTCIMMA UTCQMMA UTCOMMA "
           "UTCMMA", OpcodeInfo("tensor", "tensor", pipe="tensor")),
    # memory
    **_ops("LDG LD LDGSTS UTMALDG UBLKCP", OpcodeInfo("ldst", space="global", is_load=True)),
    # texture and surface reads (Maxwell/Pascal table): global memory through the texture path
    **_ops("TEX TEXS TLD TLDS TLD4 TLD4S TXQ TXD SULD",
           OpcodeInfo("ldst", space="global", is_load=True)),
    **_ops("STG ST RED ATOM ATOMG REDG UTMASTG UBLKRED UTMAREDG SUST SURED SUATOM",
           OpcodeInfo("ldst", space="global")),
    **_ops("LDS LDSM", OpcodeInfo("ldst", space="shared", is_load=True)),
    **_ops("STS ATOMS", OpcodeInfo("ldst", space="shared")),
    **_ops("LDL", OpcodeInfo("ldst", space="local", is_load=True)),
    **_ops("STL", OpcodeInfo("ldst", space="local")),
    **_ops("LDC ULDC LDCU", OpcodeInfo("ldst", space="constant", is_load=True)),
    # control
    **_ops("BRA BRX BRXU JMP JMX JMXU CAL CALL RET SSY SYNC BSSY BSYNC PBK BRK BREAK KILL "
           "BPT YIELD BMOV JCAL PRET PCNT CONT PEXIT", OpcodeInfo("branch")),
    **_ops("BAR MEMBAR DEPBAR ARRIVES SYNCS WARPSYNC ERRBAR CCTL CCTLL CCTLT LDGDEPBAR FENCE "
           "UTCBAR WARPGROUP NANOSLEEP ACQBULK TEXDEPBAR",
           OpcodeInfo("barrier")),
    **_ops("EXIT", OpcodeInfo("exit")),
    **_ops("START END", OpcodeInfo("virtual")),
}


#: Waits of one warp on its own scoreboards (outstanding loads), not synchronisation with
#: other warps: ``DEPBAR`` (Maxwell to Hopper: "dependency barrier", waits until at most N
#: of a scoreboard's operations are pending; CUDA Binary Utilities opcode tables),
#: ``TEXDEPBAR`` (texture) and ``LDGDEPBAR`` (Ampere's asynchronous copies). They keep unit
#: ``barrier`` (an issue slot of the control pipe) but are no block barrier: the models'
#: synchronisation counts (H&K #Synch_insts) leave them out (:func:`is_block_barrier`).
SCOREBOARD_WAITS = frozenset({"DEPBAR", "TEXDEPBAR", "LDGDEPBAR"})
#: Memory fences: order one warp's own accesses (PTX ``membar``/``fence``), no rendezvous
#: with other warps. ptxas puts a ``MEMBAR.CTA`` before each ``BAR.SYNC`` of PTX 6+
#: ``barrier.sync`` on sm_5x/sm_6x; counting it would count each ``__syncthreads`` twice.
FENCES = frozenset({"MEMBAR", "FENCE"})
#: Cache controls (CUDA Binary Utilities, Maxwell and Pascal table: ``CCTL``/``CCTLL`` "Cache
#: Control", ``CCTLT`` "Texture Cache Control"; ``CCTL`` again from Volta on): an operation
#: on the warp's own cache lines, no rendezvous with other warps, so no block barrier either.
CACHE_CONTROLS = frozenset({"CCTL", "CCTLL", "CCTLT"})


def is_scoreboard_wait(opcode: str) -> bool:
    """True for ``DEPBAR``-like waits of a warp on its own scoreboards (not a barrier)."""
    return base_mnemonic(opcode) in SCOREBOARD_WAITS


def is_block_barrier(unit: str, opcode: str) -> bool:
    """True for a barrier instruction that synchronises warps (``BAR``, ``SYNCS``, ...): unit
    ``barrier`` other than a scoreboard wait, a memory fence or a cache control."""
    return unit == "barrier" and base_mnemonic(opcode) not in _NOT_BLOCK_BARRIERS


_NOT_BLOCK_BARRIERS = SCOREBOARD_WAITS | FENCES | CACHE_CONTROLS


def base_mnemonic(opcode: str) -> str:
    """The mnemonic without predicate and modifiers: ``'@P0 IADD3.X'`` -> ``'IADD3'``."""
    text = _PREDICATE.sub("", opcode.strip().upper())
    return text.split()[0].split(".")[0] if text else ""


#: ``HFMA2.MMA`` is ptxas's register-move idiom (``HFMA2.MMA R2, -RZ, RZ, c, c`` writes a
#: constant): a move it issues to the MMA pipe to spare the ALU, not FP16 arithmetic. It is
#: counted as a move (latency class ``mov``) whose issue slot counts and which occupies no
#: FP16 or FP32 lanes (pipe ``tensor``: that pipe's row counts multiply-adds, and a move has
#: none).
MMA_PIPE_MOVE = OpcodeInfo("cuda_core", "mov", pipe="tensor")


@lru_cache(maxsize=4096)  # a kernel repeats few mnemonics many times
def classify(opcode: str) -> OpcodeInfo | None:
    """Unit and latency class of a SASS mnemonic (``'IADD.X'`` -> int_add), or None if unknown."""
    base = base_mnemonic(opcode)
    if base == "HFMA2" and ".MMA" in _PREDICATE.sub("", opcode.strip().upper()).split()[0]:
        return MMA_PIPE_MOVE
    return _TABLE.get(base)


def pipe_of(info: OpcodeInfo) -> str:
    """The issue pipe of a classified instruction (``cuda_core`` defaults to ``fp32``)."""
    if info.pipe is not None:
        return info.pipe
    return "fp32" if info.unit == "cuda_core" else info.unit
