"""Text for a diff: ``to_text`` turns bytes, or text with NUL characters, into clean text and
says what it replaced (a hex dump for binary data). The noise taken out of torch's texts
before diffing is compiler's (``compiler.analysis.normalize``, compiler/parse/_normalize.py)."""

from __future__ import annotations


def to_text(value: str | bytes | bytearray) -> tuple[str, str | None]:
    """Clean text for a diff and, when something had to be replaced, a note saying what:
    bytes that are not UTF-8 are decoded with U+FFFD for the bad bytes; NUL characters and
    lone surrogates (which no browser or JSON encoder takes) become U+FFFD."""
    note = None
    if isinstance(value, (bytes, bytearray)):
        data = bytes(value)
        if _binary(data):
            return hexdump(data), f"binary data ({len(data):,} bytes): shown as a hex dump, 16 bytes a line"
        try:
            value = data.decode("utf-8")
        except UnicodeDecodeError:
            value = data.decode("utf-8", errors="replace")
            note = "not valid UTF-8: undecodable bytes shown as \ufffd"
    if "\x00" in value:
        value = value.replace("\x00", "\ufffd")
        note = note or "binary data: NUL characters shown as \ufffd"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in value)
        note = note or "invalid characters (lone surrogates) shown as \ufffd"
    return value, note


def _binary(data: bytes) -> bool:
    """Bytes that are not text: a NUL, or more than 5% control bytes in the first 8 kB (tabs,
    line ends, form feeds and ESC, which colour terminal logs, do not count; bytes that are not
    UTF-8 do not either: that is text in another encoding)."""
    head = data[:8192]
    if b"\x00" in head:
        return True
    odd = sum(b < 32 and b not in b"\t\n\r\f\x1b" or b == 127 for b in head)
    return odd > 0.05 * max(len(head), 1)


def hexdump(data: bytes) -> str:
    """``00000010  48 65 6c 6c 6f 0a …  |Hello.|``: offset, 16 bytes in hex, printable ASCII."""
    lines = []
    for off in range(0, len(data), 16):
        chunk = data[off : off + 16]
        hexes = " ".join(f"{b:02x}" for b in chunk)
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{off:08x}  {hexes:<47}  |{text}|")
    return "\n".join(lines)
