"""Short SASS listings written out in tests (no CUDA tools needed)."""


def listing_of(lines) -> str:
    """A cuobjdump-style sm_90 listing of ``lines`` (one instruction each, stall 1)."""
    out = ["\tcode for sm_90", "\t\tFunction : k"]
    for k, text in enumerate(lines):
        out.append(f"        /*{k * 16:04x}*/                   {text} ;   /* 0x0000000000007802 */")
        out.append("                                                     /* 0x000fe20000000f00 */")
    return "\n".join(out) + "\n"
