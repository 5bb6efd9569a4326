"""The colours of tbench-plot's charts: a backend's colour, its series'
shades, dashes and points, and the colours of the decomposition's layers."""

# A backend's colour is picked by its place in the registry (tbench -b
# list), so that it keeps its colour from sweep to sweep; a backend the
# registry lacks takes one of OTHER, by its name's checksum.
PALETTE = ("1f77b4", "bcbd22", "8c564b", "2ca02c", "d62728", "9467bd", "ff7f0e", "e377c2", "17becf", "404040")
OTHER = ("393b79", "637939", "8c6d31", "843c39", "7b4173")
# A step of the decomposition's stack by its place there.
LAYER_PALETTE = ("8c8c8c", "d62728", "2ca02c", "1f77b4", "ff7f0e")

_SHADES = (1, 0.55, 1.4, 0.3, 0.8)
_DASHES = (1, 2, 4, 5, 3)
_POINTS = (7, 5, 9, 13, 11)


def posix_cksum(data):
    """The CRC of POSIX cksum(1) of DATA (bytes): stable across runs and
    machines, unlike hash()."""
    crc = 0
    for byte in data + _length_bytes(len(data)):
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
            crc &= 0xFFFFFFFF
    return ~crc & 0xFFFFFFFF


def _length_bytes(n):
    out = bytearray()
    while n:
        out.append(n & 0xFF)
        n >>= 8
    return bytes(out)


def color_of(backend, registry):
    """RRGGBB of BACKEND; REGISTRY: the backends in tbench -b list's order."""
    if backend in registry:
        return PALETTE[registry.index(backend) % len(PALETTE)]
    return OTHER[posix_cksum((backend + "\n").encode()) % len(OTHER)]


def shade(hex_color, factor):
    """HEX_COLOR darker (FACTOR < 1) or lighter (> 1), as RRGGBB."""
    out = ""
    for c in range(3):
        v = int(hex_color[2 * c:2 * c + 2], 16)
        v = v * factor if factor <= 1 else v + (255 - v) * (factor - 1)
        out += "%02x" % int(v + 0.5)
    return out


def series_style(backend, k, registry):
    """(RRGGBB, dash type, point type) of the K-th series of BACKEND: its
    colour darker or lighter; the three cycle at offsets that keep the
    first 25 of a backend apart."""
    i, r = k % 5, k // 5
    return (shade(color_of(backend, registry), _SHADES[i]), _DASHES[(i + r) % 5], _POINTS[(i + 2 * r) % 5])


def layer_color(layer, n, model, registry):
    """A layer's colour: a sibling difference the upper backend's, a step
    of the stack by its place there, any other (a step over a level the
    sweep lacks) by its place N in the panel."""
    for sib in model.siblings:
        if sib.name == layer:
            return color_of(sib.upper, registry)
    i = model.stack_names.index(layer) if layer in model.stack_names else n
    return LAYER_PALETTE[i % len(LAYER_PALETTE)]
