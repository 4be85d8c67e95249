"""Decode the scheduling control information of SASS instructions: sm_70+ (Volta to
Blackwell) from each instruction's second word, sm_5x/sm_6x (Maxwell, Pascal) from the
control word of its bundle (:func:`instruction_control`, at the end).

From Volta on, every instruction is a 128-bit word that carries its own control
information, set by the assembler (ptxas) rather than by hardware. Jia, Maggioni, Staiger
and Scarpazza, *Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking*
(arXiv:1804.06826, 2018), §2.1–2.2, find it in bits 105–125 of the 128-bit word, with two
zero bits above, as six fields (from the most significant end):

=====  ==================  ====================================================
bits   field               meaning
=====  ==================  ====================================================
4      reuse flags         keep source operand slot k in the operand reuse cache
                           (bit 0 = first source slot)
6      wait barrier mask   wait until each of these scoreboards (0–5) is released
3      read barrier index  scoreboard released once the sources are read (7 = none)
3      write barrier index scoreboard released once the result is written (7 = none)
1      yield flag          scheduler hint to switch to another warp
4      stall cycles        cycles to wait before issuing this warp's next instruction
=====  ==================  ====================================================

Jia et al., *Dissecting the NVidia Turing T4 GPU via Microbenchmarking* (arXiv:1903.07486,
2019), §2 find the same layout on Turing; the fixtures of this repository (sm_75 to sm_120,
nvcc 13) decode consistently with it (every variable-latency producer — S2R, LDG, LDS, MUFU,
LDC — sets a write barrier and its consumers wait on exactly that bit; tested field by field).
The semantics of stall, yield and the barriers go back to Maxwell's separate control words
(Gray, *maxas* wiki, "Control Codes", 2014–2016) which Jia et al. cite.

In the printed listing the 128-bit instruction is two 64-bit words, the second on the line
after the instruction; bit ``b`` of the 128-bit word is bit ``b - 64`` of that second word,
so the fields lie at bits 41–62 of it:
stall 41–44, yield 45, write barrier 46–48, read barrier 49–51, wait mask 52–57, reuse
58–61.

**Maxwell and Pascal.** Gray's *maxas* wiki ("Control Codes") describes the 64-bit control
word that precedes each bundle of three 64-bit instructions: three 21-bit fields, the first
instruction's in bits 0–20, the second's in 21–41, the third's in 42–62, each with the
same fields in the same order as above (stall in its lowest four bits, then yield, write
barrier, read barrier, wait mask, reuse). The fixtures (sm_52, sm_60, sm_61, CUDA 12.4
ptxas) decode consistently with it: the reuse bits equal the ``.reuse`` annotations and
every variable-latency producer's consumer waits on its write barrier (the fixture-wide
tests of ``tests/core/test_sass_control.py``), and a stall count of 0 precedes exactly the
instructions nvdisasm braces as dual-issued.

The yield field is reported as its raw bit; the papers name the field but do not settle
which value means "yield", so the importer does not use it.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

#: Index value meaning "no scoreboard" in the read/write barrier fields.
NO_BARRIER = 7
#: Scoreboards a warp has (Jia et al. 2018 §2.2: "6 available barriers").
BARRIERS = 6
_WAITS = [tuple(i for i in range(BARRIERS) if mask >> i & 1) for mask in range(64)]


@dataclass(frozen=True)
class Control:
    """The control fields of one sm_70+ instruction."""

    stall: int  # cycles before the next instruction of the warp may issue (0–15)
    yield_bit: int  # raw yield flag bit
    write_barrier: int | None  # scoreboard set until the result is written, or None
    read_barrier: int | None  # scoreboard set until the sources are read, or None
    wait_mask: int  # scoreboards (bit i = barrier i) waited on before issuing
    reuse: int  # operand reuse flags (bit 0 = first source slot)

    @property
    def waits(self) -> tuple:
        """Scoreboard indices this instruction waits on."""
        return _WAITS[self.wait_mask]

    def text(self) -> str:
        """CuAssembler-like summary ``B0-2---:R-:W1:Y:S04`` (wait mask, read, write, yield,
        stall), for labels and messages."""
        mask = "".join(str(i) if self.wait_mask >> i & 1 else "-" for i in range(BARRIERS))
        rd = "-" if self.read_barrier is None else str(self.read_barrier)
        wr = "-" if self.write_barrier is None else str(self.write_barrier)
        return f"B{mask}:R{rd}:W{wr}:{'Y' if self.yield_bit else '-'}:S{self.stall:02d}"


@lru_cache(maxsize=8192)
def decode_control(second_word: int) -> Control:
    """Control fields of the second 64-bit word of an sm_70+ instruction."""
    w = int(second_word)
    field = lambda shift, bits: (w >> shift) & ((1 << bits) - 1)
    wr, rd = field(46, 3), field(49, 3)
    return Control(stall=field(41, 4), yield_bit=field(45, 1),
                   write_barrier=None if wr == NO_BARRIER else wr,
                   read_barrier=None if rd == NO_BARRIER else rd,
                   wait_mask=field(52, 6), reuse=field(58, 4))


def encode_control(stall: int = 1, yield_bit: int = 1, write_barrier: int | None = None,
                   read_barrier: int | None = None, wait_mask: int = 0, reuse: int = 0) -> int:
    """The control bits of a second encoding word (the inverse of :func:`decode_control`;
    the instruction bits of that word are left 0). For generated listings (benchmarks)."""
    wr = NO_BARRIER if write_barrier is None else write_barrier
    rd = NO_BARRIER if read_barrier is None else read_barrier
    return ((stall & 0xF) << 41 | (yield_bit & 1) << 45 | (wr & 7) << 46 | (rd & 7) << 49
            | (wait_mask & 0x3F) << 52 | (reuse & 0xF) << 58)


#: sm_5x/sm_6x: bits of one instruction's control field in its bundle's control word.
FIELD_BITS = 21


def bundle_field(bundle_control: int, slot: int) -> int:
    """The 21-bit control field of the ``slot``-th (0-2) instruction of a Maxwell/Pascal
    bundle: bits 21·slot to 21·slot + 20 of the bundle's control word (Gray, maxas wiki,
    "Control Codes")."""
    return (int(bundle_control) >> (FIELD_BITS * slot)) & ((1 << FIELD_BITS) - 1)


def instruction_control(ins) -> Control | None:
    """The control fields of one listed instruction: sm_70+ from its second encoding word,
    sm_5x/6x from its bundle's control word (the same 21-bit layout, Gray, maxas wiki,
    "Control Codes"; Jia et al. 2018 §2.1 find Volta's fields in that order); None when the
    listing does not give them."""
    if len(ins.words) >= 2:
        return decode_control(ins.words[1])
    if ins.bundle_control is not None and 0 <= ins.bundle_slot <= 2:
        return decode_control(bundle_field(ins.bundle_control, ins.bundle_slot) << 41)
    return None
