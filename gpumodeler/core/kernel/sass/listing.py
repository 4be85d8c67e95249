"""Parse SASS listings (``cuobjdump -sass`` and ``nvdisasm`` output) into functions and
instructions: address, guard predicate, opcode with modifiers, operands, encoding words and
branch target.

Both tools print one instruction per line as ``/*ADDR*/  [@P0] OPCODE operands ;``
optionally followed by its encoding as ``/* 0x<16 hex digits> */``. From Volta (sm_70) on an
instruction is 128 bits: cuobjdump (and ``nvdisasm -hex``) print the first 64-bit word on the
instruction line and the second, which holds the scheduling control information
(:mod:`.control`), alone on the next line. Maxwell and Pascal (sm_5x, sm_6x) instructions
are 64 bits, grouped in bundles of 32 bytes: one control word, printed alone on the line
before its three instructions, then the three (Gray, *maxas* wiki, "Control Codes"); the
control word has the bundle's first address (0x..00, 0x..20, ...), so the instructions of
a bundle are at +8, +16, +24. Each instruction keeps its bundle's control word
(``SassInstruction.bundle_control``; Kepler's bundles of seven have another format and are
not decoded). References: NVIDIA, *CUDA Binary Utilities*
(cuobjdump, nvdisasm, §Instruction Set Reference); Jia et al. 2018, *Dissecting the NVIDIA
Volta GPU Architecture via Microbenchmarking*, §2.1 (128-bit encoding).

**Branch targets.** cuobjdump prints a Maxwell/Pascal branch to the first instruction of a
bundle with the bundle's address, i.e. its control word's (``@P2 BRA 0x180`` where the
target instruction is at ``0x188``): such a target resolves to the first instruction after
the control word. A branch whose target is no instruction of its function (and no control
word right before one) is an error naming it, never a dropped edge (a call to code outside
the function keeps no target: it falls through, as calls do).

**Dual issue.** nvdisasm marks the two instructions a Maxwell/Pascal warp scheduler issues
together with braces: ``{ IADD.X R5, R5, c[0x0][0x14c] ;`` then ``@!P0 BRA `(.L_x_0) }``
(the second without ``;``; with ``-hex`` its encoding word comes on the next line, after
which control words may follow). The braces are parsed; the second instruction of a pair
has ``dual_issued`` set.

Function boundaries: cuobjdump opens one with ``Function : NAME``; nvdisasm with a
``.text.NAME`` section (``.section .text.NAME`` / ``.text.NAME:``). nvdisasm gives branch
targets as labels (``BRA `(.L_x_0)``), resolved here to addresses. The architecture comes
from ``code for sm_XX`` / ``.target sm_XX`` lines.

Errors (:class:`ListingError`) name what is wrong: no instruction at all (another tool's
output), binary data, a function without instructions, a truncated listing (an instruction
line cut before its ``;``, a 128-bit instruction without its second word, a function that
does not end in EXIT/RET/BRA, or a branch to an address past the end).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
import re

from gpumodeler.core.errors import FormatError
from gpumodeler.core.kernel.collector import collector_paused


class ListingError(FormatError):
    """A file that is not a usable SASS listing."""


_OPCODE_OK = re.compile(r"^[A-Z][A-Z0-9_]*(\.[A-Za-z0-9_]+)*$")
_HEXWORD = re.compile(r"/\*\s*(0x[0-9a-fA-F]{16})\s*\*/")
#: a line that starts with a comment: an encoding word alone (group 1: ``/* 0x… */``), or an
#: instruction's address and the rest (groups 2 and 3: ``/*0a10*/ FFMA …``), in one match
_SLASH_LINE = re.compile(r"^\s*/\*(?:\s*(0x[0-9a-fA-F]{16})\s*\*/\s*$|([0-9a-fA-F]{4,})\*/\s*(.*)$)")
_FUNC_CUOBJ = re.compile(r"^\s*Function\s*:\s*(\S+)\s*$")
_FUNC_NVDIS = re.compile(r"^\s*(?:\.section\s+)?\.text\.([^\s,:]+)\s*[,:]")
#: cuobjdump -res-usage: " Function NAME:" then "  REG:32 STACK:0 SHARED:3072 LOCAL:0 ..."
_RES_FUNC = re.compile(r"^\s*Function\s+([^\s:]+):\s*$")
_RES_LINE = re.compile(r"^\s*REG:(\d+)\b(?:.*\bSHARED:(\d+)\b)?")
_SHI_REGISTERS = re.compile(r"\.sectioninfo\s.*\bSHI_REGISTERS=(\d+)")
_ARCH = re.compile(r"(?:code for|\.target)\s+(sm_\d+[a-z]?)\b")
#: nvdisasm of CUDA 12 and older prints no ``.target`` line, only the ELF header flags
#: (``.headerflags @"... EF_CUDA_SM52 ..."``).
_HEADER_ARCH = re.compile(r"\.headerflags\b.*?\bEF_CUDA_SM(\d+)\b")
_LABEL = re.compile(r"^\s*(\.L_[A-Za-z0-9_]+|\$[^\s:]+):\s*$")
_GUARD = re.compile(r"^(@!?U?P[T0-9])\s+")
_LABEL_REF = re.compile(r"`\(([^)]+)\)")
_HEX_TARGET = re.compile(r"^(0x[0-9a-fA-F]+)$")
#: Opcodes whose last operand is a code address. BSSY/BMOV hold a reconvergence address but
#: do not transfer control; CALL/CAL go to a subroutine and come back.
BRANCHES = {"BRA", "JMP", "BRX", "JMX", "BRXU", "JMXU"}
CALLS = {"CALL", "CAL"}
#: sm_5x/sm_6x: ``SSY`` pushes the address where a divergent region's threads meet again (a
#: ``SYNC`` goes there), ``PBK`` where a loop's ``BRK`` goes; their operand is kept as the
#: instruction's ``target`` (they do not transfer control themselves)
RECONVERGENCE = {"SSY", "PBK"}
TERMINATORS = {"EXIT", "RET", "BRA", "JMP", "BRX", "JMX", "BRXU", "JMXU", "KILL", "BPT"}
#: sm_5x/sm_6x: a bundle is one control word and three 64-bit instructions (Gray, maxas).
BUNDLE_BYTES = 32


@dataclass(frozen=True)
class SassInstruction:
    """One instruction of a listing."""

    address: int
    guard: str | None  # "@P0", "@!P0", None
    opcode: str  # with modifiers: "LDG.E.128"
    operands: tuple  # operand strings, as printed
    text: str  # the whole instruction as printed, without the trailing ';'
    words: tuple = ()  # encoding words (ints), first then second
    target: int | None = None  # branch/call target address
    mnemonic: str = ""  # opcode without modifiers: "LDG"
    modifiers: tuple = ()  # ("E", "128")
    #: sm_5x/sm_6x: the control word of the instruction's 32-byte bundle (None: not given)
    bundle_control: int | None = None
    #: issued together with the previous instruction (nvdisasm's ``{ A ; B }``: set on B)
    dual_issued: bool = False

    @property
    def control_word(self) -> int | None:
        """The second 64-bit word of a 128-bit instruction (sm_70+), if the listing has it."""
        return self.words[1] if len(self.words) >= 2 else None

    @property
    def bundle_slot(self) -> int:
        """sm_5x/sm_6x: the instruction's place (0, 1, 2) in its bundle, from its address."""
        return (self.address % BUNDLE_BYTES) // 8 - 1


@dataclass
class SassFunction:
    name: str
    arch: str | None
    instructions: list = field(default_factory=list)
    demangled: str | None = None
    # what the listing says the compiler allocated (None: it does not say): cuobjdump
    # -res-usage's "REG:n ... SHARED:n", nvdisasm's .sectioninfo "SHI_REGISTERS=n"
    registers: int | None = None
    shared_bytes: int | None = None

    @property
    def display_name(self) -> str:
        return self.demangled or self.name


@dataclass
class SassListing:
    functions: list
    tool: str  # "cuobjdump" or "nvdisasm"
    #: the CUDA source the listing was compiled from ("" when read from a listing or cubin):
    #: the kernels' parameter names (parameters.py)
    source: str = ""

    def archs(self) -> list[str]:
        return sorted({f.arch for f in self.functions if f.arch},
                      key=lambda a: int(re.sub(r"\D", "", a) or 0))


@lru_cache(maxsize=65536)
def _split_operands(text: str) -> tuple:
    if "[" not in text and "(" not in text:
        return tuple(p.strip() for p in text.split(",") if p.strip())
    return tuple(split_commas(text, "[(", "])"))


def split_commas(text: str, opens: str, closes: str) -> list[str]:
    """``text`` split at its commas outside the brackets ``opens``/``closes``, each part
    stripped; an empty last part is left out."""
    out: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in text:
        if ch in opens:
            depth += 1
        elif ch in closes:
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    last = "".join(cur).strip()
    if last:
        out.append(last)
    return out


@lru_cache(maxsize=8192)
def _valid_opcode(opcode: str) -> bool:
    return bool(_OPCODE_OK.match(opcode))


class _TextProblem(Exception):
    """What is wrong with an instruction's text (the caller adds its line and address)."""


def _parse_instruction(addr: int, body: str, words: list, lineno: int,
                       bundle_control: int | None = None) -> SassInstruction:
    text = _HEXWORD.sub("", body).strip() if "/*" in body else body.strip()
    try:
        guard, opcode, operands, text, target, mnem, modifiers, dual = _parse_text(text)
    except _TextProblem as exc:
        kind, detail = exc.args
        if kind == "cut":
            raise ListingError(f"line {lineno}: instruction at 0x{addr:04x} is cut off before "
                               f"its ';' ({detail[:40]!r}); the listing looks truncated") from None
        if kind == "empty":
            raise ListingError(f"line {lineno}: empty instruction at 0x{addr:04x}") from None
        raise ListingError(f"line {lineno}: {detail!r} at 0x{addr:04x} is not a SASS "
                           f"opcode") from None
    # the instance's fields set directly, in field order: what the frozen dataclass's
    # __init__ does with one Python-level object.__setattr__ call per field, which made
    # up most of the parse (the values are the ones __init__ would be given)
    ins = object.__new__(SassInstruction)
    ins.__dict__.update(address=addr, guard=guard, opcode=opcode, operands=operands, text=text,
                        words=tuple(words), target=target, mnemonic=mnem,
                        modifiers=modifiers, bundle_control=bundle_control,
                        dual_issued=dual)
    return ins


@lru_cache(maxsize=65536)  # an unrolled kernel repeats its instructions' text (6x at 21 000)
def _parse_text(text: str) -> tuple:
    """``(guard, opcode, operands, text, target, mnemonic, modifiers, dual-issued)`` of an
    instruction's text without its address and encoding words; raises _TextProblem. A
    target is an int, or a label's name (resolved after the function is read)."""
    dual = False
    if text.startswith("{"):  # nvdisasm: the first of a dual-issued pair
        text = text[1:].lstrip()
    if text.endswith("}"):  # ... and the second, without its ';'
        text = text[:-1].rstrip()
        dual = True
        if not text.endswith(";"):
            text += " ;"
    if not text.endswith(";"):
        raise _TextProblem("cut", text)
    text = text[:-1].strip()
    guard = None
    rest = text
    if text.startswith("@"):
        m = _GUARD.match(text)
        if m:
            guard = m.group(1)
            rest = text[m.end():]
    parts = rest.split(None, 1)
    if not parts:
        raise _TextProblem("empty", "")
    opcode = parts[0].upper()
    if not _valid_opcode(opcode):
        raise _TextProblem("opcode", opcode)
    operands = _split_operands(parts[1]) if len(parts) > 1 else ()
    target: int | str | None = None  # a label's name until the function is read
    mnem = opcode.split(".")[0]
    if (mnem in BRANCHES or mnem in CALLS or mnem in RECONVERGENCE) and operands:
        last = operands[-1]
        lm = _LABEL_REF.search(last)
        if lm:
            target = lm.group(1)  # resolved after the function is read
        else:
            hm = _HEX_TARGET.match(last.strip())
            if hm:
                target = int(hm.group(1), 16)
    return guard, opcode, operands, text, target, mnem, tuple(opcode.split(".")[1:]), dual


@collector_paused()  # many small objects, no cycles (core/kernel/collector.py)
def parse_listing(text: str, source: str = "listing") -> SassListing:
    """Functions and instructions of a cuobjdump -sass or nvdisasm listing.

    Raises ListingError when the text is not such a listing or is truncated."""
    if "\x00" in text:
        raise ListingError(f"{source} contains binary data, not a text listing; give a "
                           f"cuobjdump -sass or nvdisasm listing, or a .cu source")
    functions: list[SassFunction] = []
    arch = None
    tool = None
    resources: list = []  # (functions seen before it, name, registers, shared bytes)
    res_name = None  # the function a -res-usage "REG:" line that follows belongs to
    current: SassFunction | None = None
    pending_labels: list[str] = []
    labels: dict = {}
    raw: list = []  # [function, addr, body, words, lineno], or (None, word, lineno) for a
    # word alone on its line (a 128-bit instruction's second word, a Maxwell/Pascal control
    # word, or the word of an nvdisasm pair's second instruction): assigned in _finish

    def close_function():
        nonlocal current, labels
        if current is not None:
            _finish(current, raw, labels, source)
        current, labels = None, {}
        raw.clear()

    for lineno, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("/*"):
            m = _SLASH_LINE.match(line)
            if m is None or current is None:
                continue
            word, address, body = m.groups()
            if word is not None:
                raw.append((None, int(word, 16), lineno))
            else:
                if body.lstrip().startswith("."):  # nvdisasm data directives (.byte, .word)
                    continue
                addr = int(address, 16)
                words = [int(w, 16) for w in _HEXWORD.findall(body)]
                entry = [current, addr, body, words, lineno]
                raw.append(entry)
                if pending_labels:
                    for lab in pending_labels:
                        labels[lab] = addr
                    pending_labels = []
            continue
        am = _ARCH.search(line)
        if am and "/*" not in line:
            arch = am.group(1)
            continue
        hm = _HEADER_ARCH.search(line) if current is None else None
        if hm:  # nvdisasm's file header (cuobjdump prints it inside a function: not used)
            if arch_number(arch) != int(hm.group(1)):
                arch = f"sm_{hm.group(1)}"
            continue
        rm = _RES_FUNC.match(line)
        if rm:
            res_name = rm.group(1)
            continue
        rm = _RES_LINE.match(line) if res_name else None
        if rm:
            shared = int(rm.group(2)) if rm.group(2) is not None else None
            resources.append((len(functions), res_name, int(rm.group(1)), shared))
            res_name = None
            continue
        rm = _SHI_REGISTERS.search(line) if current is not None else None
        if rm and current is not None:
            current.registers = int(rm.group(1))
            continue
        fm = _FUNC_CUOBJ.match(line)
        if fm:
            close_function()
            tool = tool or "cuobjdump"
            current = SassFunction(fm.group(1), arch)
            functions.append(current)
            continue
        fm = _FUNC_NVDIS.match(line)
        if fm and "/*" not in line:
            name = fm.group(1)
            if current is None or current.name != name:
                close_function()
                tool = tool or "nvdisasm"
                current = SassFunction(name, arch)
                functions.append(current)
            continue
        lm = _LABEL.match(line)
        if lm:
            pending_labels.append(lm.group(1))
            continue
        if line.strip().startswith(".........."):
            close_function()
    close_function()
    if not functions:
        hint = ""
        low = text.lower()
        if ".entry" in low and (".version" in low or ".target" in low):
            hint = " (this looks like PTX; compile it to a cubin and run cuobjdump -sass)"
        elif "disassembly of section" in low:
            hint = " (this looks like objdump output for a CPU, not SASS)"
        raise ListingError(f"{source} is not a cuobjdump -sass or nvdisasm listing: no "
                           f"'Function : NAME' or '.text.NAME' section with SASS "
                           f"instructions like '/*0000*/ MOV R1, c[0x0][0x28] ;' found{hint}")
    _attach_resources(functions, resources)
    return SassListing(functions=functions, tool=tool or "cuobjdump")


def _attach_resources(functions: list, resources: list) -> None:
    """Each function's registers and shared memory from the -res-usage lines naming it:
    the last block printed before the function (cuobjdump -sass -res-usage prints each
    cubin's block before its code), else the first after it (a -res-usage output appended
    to the listing)."""
    for k, func in enumerate(functions):
        named = [r for r in resources if r[1] == func.name]
        if not named:
            continue
        before = [r for r in named if r[0] <= k]
        _, _, regs, shared = before[-1] if before else named[0]
        func.registers = regs
        if shared is not None:
            func.shared_bytes = shared


def _assign_words(raw: list, wide: bool) -> list:
    """Instruction entries ``(addr, body, words, lineno, bundle_control)``, the words printed
    alone on their lines given to their owners: to a 128-bit instruction still lacking its
    second word (sm_70+); to an nvdisasm pair's second instruction, whose word follows it,
    in a listing that prints words; else (sm_5x/6x) a bundle's control word, kept for the
    instructions after it."""
    entries = []
    prints_words = any(e[0] is not None and e[3] for e in raw)
    control = None
    for e in raw:
        if e[0] is not None:
            entries.append([e[1], e[2], e[3], e[4], control])
            continue
        word = e[1]
        last = entries[-1] if entries else None
        if wide:
            if last is not None and len(last[2]) == 1:
                last[2].append(word)
        elif last is not None and not last[2] and prints_words:
            last[2].append(word)
        else:
            control = word
    return entries


def _finish(func: SassFunction, raw: list, labels: dict, source: str) -> None:
    instr = [e for e in raw if e[0] is not None]
    if not instr:
        raise ListingError(f"function {func.name} in {source} has no instructions")
    step = None
    if len(instr) >= 2:
        step = instr[1][1] - instr[0][1]
    wide = is_128bit(func.arch, step)
    bundles = not wide and has_bundles_of_three(func.arch, [e[1] for e in instr])
    instructions = []
    previous = -1
    for addr, body, words, lineno, control in _assign_words(raw, wide):
        if addr <= previous:
            raise ListingError(f"line {lineno}: instruction address 0x{addr:04x} of {func.name} "
                               f"does not follow 0x{previous:04x}; the listing is damaged "
                               f"(lines repeated or out of order)")
        previous = addr
        if wide and len(words) == 1:
            raise ListingError(f"line {lineno}: instruction at 0x{addr:04x} of {func.name} has "
                               f"only the first of its two encoding words; the listing looks "
                               f"truncated")
        instructions.append(_parse_instruction(addr, body, words, lineno,
                                               control if bundles else None))
    last_addr = instructions[-1].address
    addresses = {ins.address for ins in instructions}
    resolved = []
    for ins in instructions:
        if isinstance(ins.target, str):
            if ins.target not in labels:
                raise ListingError(f"{func.name}: branch at 0x{ins.address:04x} goes to label "
                                   f"{ins.target} that the listing does not define; truncated?")
            ins = _replace(ins, target=labels[ins.target])
        if ins.target is not None and ins.mnemonic in BRANCHES and ins.target > last_addr:
            raise ListingError(f"{func.name}: branch at 0x{ins.address:04x} goes to 0x{ins.target:04x}, "
                               f"past the last instruction (0x{last_addr:04x}); the listing "
                               f"looks truncated")
        if ins.target is not None and ins.target not in addresses:
            ins = _replace(ins, target=_instruction_at(ins, addresses, wide, func.name))
        resolved.append(ins)
    body = [i for i in resolved if i.mnemonic != "NOP"] or resolved
    if not (body[-1].mnemonic in TERMINATORS and body[-1].guard is None):
        raise ListingError(f"{func.name} ends at 0x{last_addr:04x} without an unconditional "
                           f"EXIT, RET or BRA; the listing looks truncated")
    func.instructions = resolved


def _replace(ins: SassInstruction, **changes) -> SassInstruction:
    from dataclasses import replace
    return replace(ins, **changes)


def _instruction_at(ins: SassInstruction, addresses: set, wide: bool, name: str) -> int | None:
    """The instruction a branch or call whose printed target is no instruction goes to: on
    sm_5x/6x, a bundle's address (its control word) means the bundle's first instruction.
    Any other branch target is an error naming the branch and its target; a call to code
    outside the function (another function, a relocation) keeps no target and falls through
    (docs/sass-import.md: calls go to their subroutine and come back)."""
    t = ins.target
    if t is None:
        return None
    if not wide and t % BUNDLE_BYTES == 0 and t + 8 in addresses:
        return t + 8
    if ins.mnemonic in CALLS:
        return None
    raise ListingError(f"{name}: branch {ins.text!r} at 0x{ins.address:04x} goes to 0x{t:04x}, "
                       f"which is not the address of an instruction of {name} (nor the control "
                       f"word of a bundle before one); the listing is damaged or not one "
                       f"function's whole code")


def has_bundles_of_three(arch: str | None, addresses) -> bool:
    """Whether a 64-bit listing has Maxwell/Pascal bundles (a control word and three
    instructions per 32 bytes): sm_50 to sm_6x, or, with no architecture given, no
    instruction at a multiple of 32 bytes (Kepler's bundles of seven put one there)."""
    number = arch_number(arch)
    if number is not None:
        return 50 <= number < 70
    return all(a % BUNDLE_BYTES for a in addresses)


def is_128bit(arch: str | None, step: int | None) -> bool:
    """Whether instructions are 128 bits (sm_70+): from the architecture, else from the
    address step between instructions (16 bytes)."""
    if arch:
        digits = re.sub(r"\D", "", arch)
        if digits:
            return int(digits) >= 70
    return step == 16


def arch_number(arch: str | None) -> int | None:
    """``'sm_90a'`` -> 90."""
    if not arch:
        return None
    digits = re.sub(r"\D", "", arch)
    return int(digits) if digits else None
