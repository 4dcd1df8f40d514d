"""Typed parts a message carries beside its text: image references.

The cook format keeps an image as the placeholder `[image]` in a message's `content`; the
message also carries an `ImageRef` per image, so the viewer can show it. An embedded image
is kept only once validated: a data URI (or base64 data with its media type) of PNG, JPEG,
GIF or WebP whose base64 decodes, whose bytes are of one of those kinds and whose decoded
size is at most `MAX_IMAGE_BYTES`; otherwise the reference keeps a note saying why it was
skipped, and not the data. A remote image keeps its address only: nothing here (or in the
viewer) ever fetches it.

`digest` is the SHA-256 (hex) of the image's bytes: the decoded data of an embedded image
(the data text as given when it does not decode), the address's UTF-8 text for a remote one.
The cook adds the digests of a message's images to what its id is computed from.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass

MAX_IMAGE_BYTES = 2 * 1024 * 1024  # decoded bytes
MAX_ADDRESS_CHARS = 4096
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_ALIASES = {"image/jpg": "image/jpeg", "image/pjpeg": "image/jpeg"}

_DATA_URI_RE = re.compile(r"data:([^,;]*)((?:;[^,;]*)*),", re.S)
_WS_RE = re.compile(r"\s+")
_B64_RE = re.compile(r"[A-Za-z0-9+/]*={0,2}\Z")
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S")


@dataclass(frozen=True, slots=True)
class ImageRef:
    """One image of a message: embedded (`data_uri`), remote (`url`), or skipped (`note`)."""

    media_type: str | None
    digest: str
    data_uri: str | None = None  # data:<media type>;base64,<data>, validated
    url: str | None = None  # the address of a remote image, never fetched
    size: int | None = None  # decoded bytes of an embedded image
    note: str | None = None  # why an image is not shown (no data kept then)

    def as_dict(self) -> dict:
        return {"media_type": self.media_type, "data_uri": self.data_uri, "url": self.url,
                "digest": self.digest, "size": self.size, "note": self.note}


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def _text_bytes(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def _sniff(b: bytes) -> str | None:
    if b.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if b.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if b.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(b) >= 12 and b.startswith(b"RIFF") and b[8:12] == b"WEBP":
        return "image/webp"
    return None


def _media_type(value) -> str | None:
    if not isinstance(value, str):
        return None
    mt = value.strip().lower()[:100]
    return _ALIASES.get(mt, mt) or None


def image_from_base64(media_type, data) -> ImageRef:
    """An embedded image given as base64 text and its media type (Anthropic `source`,
    Gemini `inlineData`)."""
    mt = _media_type(media_type)
    if not isinstance(data, str):
        return ImageRef(mt, _sha(b""), note="image skipped: no base64 data")
    text = _WS_RE.sub("", data) if _WS_RE.search(data) else data
    if len(text) % 4:
        text += "=" * (-len(text) % 4)  # browsers and most encoders accept unpadded base64
    raw = None
    if _B64_RE.match(text):
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raw = None
    if raw is None:
        return ImageRef(mt, _sha(_text_bytes(data)), note="image skipped: its data is not valid base64")
    digest, size = _sha(raw), len(raw)
    if mt not in IMAGE_TYPES:
        shown = mt or "no media type"
        return ImageRef(mt, digest, size=size,
                        note=f"image skipped: {shown} is not shown (PNG, JPEG, GIF and WebP are)")
    if size > MAX_IMAGE_BYTES:
        return ImageRef(mt, digest, size=size,
                        note=f"image skipped: {size:,} bytes is over the {MAX_IMAGE_BYTES:,}-byte limit")
    kind = _sniff(raw)
    if kind is None:
        return ImageRef(mt, digest, size=size, note="image skipped: its data is not a PNG, JPEG, GIF or WebP image")
    # The bytes say what they are; a label that disagrees (a JPEG sent as image/png) is set right.
    return ImageRef(kind, digest, data_uri=f"data:{kind};base64,{text}", size=size)


def image_from_data_uri(uri: str) -> ImageRef:
    """An embedded image given as a `data:` URI."""
    m = _DATA_URI_RE.match(uri)
    if m is None:
        return ImageRef(None, _sha(_text_bytes(uri)), note="image skipped: not a well-formed data URI")
    params = [p.strip().lower() for p in m.group(2).split(";") if p.strip()]
    if "base64" not in params:
        return ImageRef(_media_type(m.group(1)), _sha(_text_bytes(uri)),
                        note="image skipped: the data URI is not base64-encoded")
    return image_from_base64(m.group(1), uri[m.end():])


def image_from_address(address, media_type=None) -> ImageRef:
    """An image given by an address: a `data:` URI is validated and embedded; any other URL
    (https, gs://, a provider's file address) is kept as the address, never fetched; text
    that is no URL at all gets a note."""
    if not isinstance(address, str) or not address.strip():
        return ImageRef(_media_type(media_type), _sha(b""), note="image skipped: no data or address")
    if address[:5].lower() == "data:":
        return image_from_data_uri(address)
    mt = _media_type(media_type)
    digest = _sha(_text_bytes(address))
    if len(address) > MAX_ADDRESS_CHARS:
        return ImageRef(mt, digest, note=f"image skipped: an address of {len(address):,} characters")
    if not _SCHEME_RE.match(address):  # a log that dropped the data ("<data removed>"), say
        return ImageRef(mt, digest, note=f"image skipped: neither data nor an address: {address[:100]}")
    return ImageRef(mt, digest, url=address)


def image_note(note: str, media_type=None, key: str = "") -> ImageRef:
    """An image that cannot be shown at all (a provider-held file, say): a note only; `key`
    (the file id, say) tells two such images apart."""
    return ImageRef(_media_type(media_type), _sha(_text_bytes(key)), note=note)
