package mcpserver

import (
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/deskhand/deskhand/server/agent"
)

// toolAnnotations are an agent tool's annotations: its title and the
// hints derived from every tool it can reach (agent.DeriveHints), each
// set explicitly, false included: a hint left out means the spec's
// default, which for destructiveHint and openWorldHint is true.
func toolAnnotations(title string, h agent.ToolHints) mcp.ToolAnnotation {
	return mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    mcp.ToBoolPtr(h.ReadOnly),
		DestructiveHint: mcp.ToBoolPtr(h.Destructive),
		IdempotentHint:  mcp.ToBoolPtr(h.Idempotent),
		OpenWorldHint:   mcp.ToBoolPtr(h.OpenWorld),
	}
}

// toolIcons are an agent tool's icons (the 2025-11-25 "icons"): its
// icon as an image, an emoji drawn in an SVG; none without one.
func toolIcons(icon string) []mcp.Icon {
	img, ok := agent.IconAsImage(icon)
	if !ok {
		return nil
	}
	return []mcp.Icon{{Src: img.Src, MIMEType: img.MIMEType, Sizes: img.Sizes}}
}
