"""The ``import_image`` built-in: a local image returned to the model as an image input.

Argument ``path`` (relative to the workspace, confined to it). The output is a
one-part list ``[{"type": "input_image", "image_url": "data:<mime>;base64,...",
"detail": "auto"}]``. The format is recognised from the file's first bytes
(PNG, JPEG, GIF, WebP); anything else, or a file over
:data:`MAX_IMAGE_BYTES`, is refused.
"""

from __future__ import annotations

import base64
from typing import Any

from runtime.builtin_tools.arguments import parse_arguments, string_arg
from runtime.builtin_tools.confinement import confine_to_workspace
from runtime.builtin_tools.failures import ToolFailure, guarded
from runtime.builtin_tools.text_files import open_regular
from runtime.tools import Runner

TOOL = "import_image"
MAX_IMAGE_BYTES = 20 * 1024 * 1024


def image_mime_type(head: bytes) -> str | None:
    """The MIME type of an image from its first bytes, or None when it is not one we accept."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def import_image_runner(workspace: str) -> Runner:
    return guarded(lambda payload: import_image(payload, workspace))


def import_image(payload: str, workspace: str) -> list[Any]:
    path = string_arg(parse_arguments(payload, TOOL, ("path",)), "path", TOOL)
    real = confine_to_workspace(path, workspace, TOOL)
    with open_regular(real, path, TOOL) as handle:
        data = handle.read(MAX_IMAGE_BYTES + 1)
    if len(data) > MAX_IMAGE_BYTES:
        raise ToolFailure(f"{TOOL}.too_large", f"{path} is larger than {MAX_IMAGE_BYTES} bytes")
    mime = image_mime_type(data[:16])
    if mime is None:
        raise ToolFailure(f"{TOOL}.unsupported_format", f"{path} is not a PNG, JPEG, GIF or "
                          "WebP image")
    url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    return [{"type": "input_image", "image_url": url, "detail": "auto"}]
