"""Kernel parameters by name: where each of a kernel's parameters sits in constant bank 0,
from its ``.cu`` source, so that a variable the import makes for a parameter (a grid-stride
loop's array length: :mod:`.grid_stride`) takes the parameter's name (``n``) instead of its
offset (``param_0x170``).

The CUDA C++ Programming Guide ("Function Parameters"; the PTX ISA, "Kernel Function
Parameters") passes ``__global__`` function parameters in constant memory, laid out as a C
struct: each parameter at the next offset aligned to its own alignment. The listing reads
them from the architecture's first parameter offset (:func:`parameter_base`).
The import takes each parameter's size and alignment from its type (the demangled
signature's where the listing has one, else the source's):

* a pointer (or array parameter): 8 bytes;
* ``char``, ``bool``: 1; ``short``, ``half``/``__half``, ``__nv_bfloat16``: 2; ``int``,
  ``unsigned``, ``float``, ``int32_t``, ``uint32_t``: 4; ``long``, ``long long``, ``size_t``,
  ``ptrdiff_t``, ``int64_t``, ``uint64_t``, ``double``: 8 (``long`` is 8 bytes on Linux;
  a Windows build's 4-byte ``long`` is not what the import assumes);
* CUDA's vector types ``T2``, ``T3``, ``T4`` (``float4``: 16 bytes, aligned to 16;
  ``float3``: 12, aligned to 4, the Programming Guide's "Vector Types" table).

A parameter of any other type (a struct, a template parameter the signature does not
resolve) ends the layout: the parameters after it keep their offset names. The source's
names are used only where the source has exactly one definition of that ``__global__``
function (or, without one, exactly one declaration) with as many parameters as the
listing's signature; a parameter written without a name keeps its offset name. Comments
are skipped; macros are not expanded (a signature written with a macro is not found, and
nothing is named).

The variable of a parameter nobody names (a listing without its source) is
``param_0x170``, its offset (:func:`parameter_variable`); :func:`named_parameter` chooses
between the two.
"""
from __future__ import annotations

import re

from gpumodeler.core.kernel.sass.listing import split_commas

#: the first kernel parameter's offset in constant bank 0, by the architecture it starts at
#: (read off the listings: the first pointer parameter's ``c[0x0][…]``)
_PARAMETER_BASE = ((100, 0x380), (90, 0x210), (70, 0x160), (50, 0x140))
#: names a parameter's variable cannot take: the launch's dimensions, the data size and the
#: once-per-block guards' variable, the expressions' functions
_RESERVED = {"block_x", "block_y", "block_z", "grid_x", "grid_y", "grid_z", "N",
             "warps_per_block", "min", "max", "ceil", "floor", "log2"}

_SCALARS = {
    "char": 1, "bool": 1, "int8_t": 1, "uint8_t": 1,
    "short": 2, "half": 2, "__half": 2, "__nv_bfloat16": 2, "int16_t": 2, "uint16_t": 2,
    "int": 4, "unsigned": 4, "float": 4, "int32_t": 4, "uint32_t": 4,
    "long": 8, "long long": 8, "size_t": 8, "ptrdiff_t": 8, "int64_t": 8, "uint64_t": 8,
    "double": 8, "long int": 8, "long long int": 8,
}
#: CUDA vector types: base -> component size (``float4`` = 4 x 4 bytes, aligned to 16)
_VECTOR_BASES = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4,
                 "float": 4, "long": 8, "ulong": 8, "longlong": 8, "ulonglong": 8,
                 "double": 8}
_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "struct",
               "signed", "unsigned", "std::"}
_IDENT = re.compile(r"[A-Za-z_]\w*")


def parameter_base(arch_number: int | None) -> int | None:
    """The offset of the first kernel parameter in constant bank 0 for an architecture
    (``sm_90``: 0x210), or None where it is not known."""
    if arch_number is None:
        return None
    return next((base for first, base in _PARAMETER_BASE if arch_number >= first), None)


def parameter_variable(offset: int) -> str:
    """The variable naming the kernel parameter at ``c[0x0][offset]``: ``param_0x170``."""
    return f"param_{offset:#x}"


def named_parameter(offset: int, names: dict, taken) -> str:
    """The variable of the kernel parameter at ``offset``: its name from the source
    (``names``, :func:`parameter_names`) where that is free (not one of the
    graph's variables ``taken`` nor a reserved name), else :func:`parameter_variable`."""
    name = names.get(offset, "")
    if name.isidentifier() and name not in _RESERVED and name not in taken and \
            not re.fullmatch(r"(loop|guard)\d+", name):
        return name
    return parameter_variable(offset)


def type_layout(text: str) -> tuple[int, int] | None:
    """``(size, alignment)`` in bytes of a parameter type (the module's table), or None."""
    t = text.strip()
    if "*" in t or "&" in t or "[" in t:
        return 8, 8
    words = [w for w in t.replace("std::", "").split() if w not in _QUALIFIERS]
    unsigned = "unsigned" in t.split()
    base = " ".join(words) or ("int" if unsigned else "")
    if base in _SCALARS:
        size = _SCALARS[base]
        return size, size
    m = re.fullmatch(r"(u?\w+?)([1234])", base)
    if m and m.group(1) in _VECTOR_BASES:
        part, count = _VECTOR_BASES[m.group(1)], int(m.group(2))
        size = part * count
        align = size if count in (1, 2, 4) else part
        return size, min(align, 16)
    return None


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _split_top(text: str) -> list[str]:
    """``text`` split at its top-level commas (outside ``<>``, ``()``, ``[]``)."""
    return split_commas(text, "<([", ">)]")


def source_parameters(source: str, function: str) -> list[tuple[str, str]] | None:
    """``[(type, name), …]`` of the ``__global__`` function ``function`` of ``source``: its
    one definition (a declaration or an explicit instantiation besides it is left alone),
    else its one declaration; None where there is not exactly one. A parameter written
    without a name (``float *``) has the name ""."""
    text = _strip_comments(source)
    found = []  # (parameters, whether a definition)
    for m in re.finditer(r"__global__", text):
        end = min([i for i in (text.find("{", m.end()), text.find(";", m.end())) if i >= 0],
                  default=-1)
        if end < 0:
            continue
        header = text[m.end():end].rstrip()
        if not header.endswith(")"):
            continue
        depth, start = 0, -1
        for i in range(len(header) - 1, -1, -1):  # the last balanced (...): the parameters
            if header[i] == ")":
                depth += 1
            elif header[i] == "(":
                depth -= 1
                if depth == 0:
                    start = i
                    break
        names = _IDENT.findall(header[:start]) if start > 0 else []
        if not names or names[-1] != function:
            continue
        params = []
        for part in _split_top(header[start + 1:-1]):
            part = part.split("=")[0].strip()
            if not part or part == "void":
                continue
            idents = _IDENT.findall(re.sub(r"\[[^\]]*\]", "", part))
            if not idents:
                return None
            name = idents[-1]
            if len(idents) < 2 or type_layout(name) is not None or name in _QUALIFIERS:
                params.append((part, ""))  # a type alone: no name
                continue
            params.append((part[:part.rfind(name)].strip() + ("*" if "[" in part else ""),
                           name))
        found.append((params, text[end] == "{"))
    definitions = [params for params, defined in found if defined]
    if len(definitions) == 1:
        return definitions[0]
    return found[0][0] if len(found) == 1 else None


def signature_types(demangled: str | None) -> list[str] | None:
    """The parameter types of a demangled signature (``f(float*, int)``), or None."""
    if not demangled or "(" not in demangled or not demangled.endswith(")"):
        return None
    inner = demangled[demangled.index("(") + 1:-1].strip()
    return [] if inner in ("", "void") else [p.strip() for p in _split_top(inner)]


def parameter_names(source: str, function: str, demangled: str | None,
                    base: int | None) -> dict:
    """``{constant-bank offset: name}`` of the parameters of ``function`` (its name without
    template arguments) in ``source``, laid out from ``base`` (the module rules); {} where
    they cannot be placed."""
    if base is None:
        return {}
    params = source_parameters(source, function)
    if params is None:
        return {}
    types = signature_types(demangled)
    if types is not None and len(types) != len(params):
        return {}
    out, offset = {}, 0
    for k, (text, name) in enumerate(params):
        layout = type_layout(types[k] if types is not None else text)
        if layout is None:
            break
        size, align = layout
        offset = -(-offset // align) * align
        if name:
            out[base + offset] = name
        offset += size
    return out


__all__ = ["named_parameter", "parameter_base", "parameter_names", "parameter_variable",
           "signature_types", "source_parameters", "type_layout"]
