package toolservers

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// Result is a tool call's outcome as the model reads it.
type Result struct {
	// Text is the result's content as text: text blocks as they are,
	// other content summarised ("[image/png, 12 KB]"), cut at the size
	// limit with a note that says so.
	Text string
	// IsError is the server's own verdict: the tool ran and failed
	// (isError); the model reads Text to recover.
	IsError bool
	// Truncated reports that Text was cut at the limit.
	Truncated bool
}

// resultText turns a server's result into text for the model, at most
// max bytes of content.
func resultText(res *mcp.CallToolResult, max int) Result {
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, contentText(c))
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if len(parts) == 0 {
		text = "(the tool returned no content)"
	}
	out := Result{Text: text, IsError: res.IsError}
	if len(text) > max {
		end := max
		for i := 0; i < utf8.UTFMax-1 && end > 0 && !utf8.RuneStart(text[end]); i++ {
			end--
		}
		out.Text = text[:end] + fmt.Sprintf("\n\n[truncated: the result is %d bytes; only the first %d bytes are shown (the limit is %d bytes)]", len(text), end, max)
		out.Truncated = true
	}
	return out
}

// contentText is one content block as text.
func contentText(c mcp.Content) string {
	switch c := c.(type) {
	case mcp.TextContent:
		return strings.ToValidUTF8(c.Text, "\uFFFD")
	case *mcp.TextContent:
		return strings.ToValidUTF8(c.Text, "\uFFFD")
	case mcp.ImageContent:
		return fmt.Sprintf("[image: %s, %s]", orUnknown(c.MIMEType), base64Size(c.Data))
	case *mcp.ImageContent:
		return fmt.Sprintf("[image: %s, %s]", orUnknown(c.MIMEType), base64Size(c.Data))
	case mcp.AudioContent:
		return fmt.Sprintf("[audio: %s, %s]", orUnknown(c.MIMEType), base64Size(c.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio: %s, %s]", orUnknown(c.MIMEType), base64Size(c.Data))
	case mcp.ResourceLink:
		return linkText(c)
	case *mcp.ResourceLink:
		return linkText(*c)
	case mcp.EmbeddedResource:
		return embeddedText(c)
	case *mcp.EmbeddedResource:
		return embeddedText(*c)
	}
	b, _ := json.Marshal(c)
	var kind struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(b, &kind)
	return fmt.Sprintf("[%s content, not shown]", orUnknown(kind.Type))
}

func linkText(l mcp.ResourceLink) string {
	s := fmt.Sprintf("[resource link: %s <%s>", l.Name, l.URI)
	if l.MIMEType != "" {
		s += ", " + l.MIMEType
	}
	if l.Description != "" {
		s += ": " + l.Description
	}
	return s + "]"
}

func embeddedText(e mcp.EmbeddedResource) string {
	switch r := e.Resource.(type) {
	case mcp.TextResourceContents:
		return fmt.Sprintf("[resource %s]\n%s", r.URI, strings.ToValidUTF8(r.Text, "\uFFFD"))
	case *mcp.TextResourceContents:
		return fmt.Sprintf("[resource %s]\n%s", r.URI, strings.ToValidUTF8(r.Text, "\uFFFD"))
	case mcp.BlobResourceContents:
		return fmt.Sprintf("[resource %s: %s, %s]", r.URI, orUnknown(r.MIMEType), base64Size(r.Blob))
	case *mcp.BlobResourceContents:
		return fmt.Sprintf("[resource %s: %s, %s]", r.URI, orUnknown(r.MIMEType), base64Size(r.Blob))
	}
	return "[embedded resource, not shown]"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

// base64Size says how big base64 data is once decoded.
func base64Size(data string) string {
	n := len(strings.TrimRight(strings.TrimSpace(data), "=")) * 3 / 4
	switch {
	case n < 1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 1024*1024:
		return fmt.Sprintf("%d KB", (n+512)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
}
