"""An MCP ``CallToolResult`` as a tool output the model reads.

Text blocks are joined with LF; with no text, the structured content is
rendered as JSON. Image blocks become ``input_image`` parts (data URIs), so a
result with an image is a list of ``input_text`` / ``input_image`` parts;
embedded text resources are inlined, resource links and audio are named.
A result flagged ``isError`` is ``mcp.tool_error: <text>``.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from runtime.tools import ToolOutput


def _part(block: Any) -> dict[str, Any]:
    if isinstance(block, types.TextContent):
        return {"type": "input_text", "text": block.text}
    if isinstance(block, types.ImageContent):
        return {"type": "input_image", "image_url": f"data:{block.mime_type};base64,{block.data}",
                "detail": "auto"}
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return {"type": "input_text", "text": text}
        return {"type": "input_text", "text": f"[binary resource {resource.uri}]"}
    if isinstance(block, types.ResourceLink):
        return {"type": "input_text", "text": f"[resource {block.uri}]"}
    if isinstance(block, types.AudioContent):
        return {"type": "input_text", "text": f"[audio {block.mime_type}, not shown]"}
    return {"type": "input_text", "text": f"[{getattr(block, 'type', 'unknown')} content]"}


def tool_output(result: types.CallToolResult) -> ToolOutput:
    parts = [_part(block) for block in result.content]
    texts = [part["text"] for part in parts if part["type"] == "input_text"]
    if not texts and result.structured_content is not None:
        structured = json.dumps(result.structured_content, ensure_ascii=False)
        parts.insert(0, {"type": "input_text", "text": structured})
        texts = [structured]
    if result.is_error:
        return "mcp.tool_error: " + ("\n".join(texts) or "the tool reported an error")
    if any(part["type"] == "input_image" for part in parts):
        return parts
    return "\n".join(texts)
