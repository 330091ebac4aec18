package ollama

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/server/agent"
)

// apiTools keeps each tool's Ollama form and the length of its JSON, by
// its spec. An agent sends the same tools on every chat, and turning a
// JSON Schema into api.Tool (ordered maps, decoded property by property)
// and encoding it again to size the window cost more than streaming a
// short answer.
var apiTools toolCache

// maxCachedTools bounds the cache: past it, it starts over.
const maxCachedTools = 512

type toolCache struct {
	mu sync.Mutex
	m  map[toolKey]cachedTool
}

type toolKey struct{ name, description, parameters string }

// cachedTool is shared by the chats that send it: nothing changes it once
// made.
type cachedTool struct {
	tool api.Tool
	size int // bytes of its JSON
}

// get is spec's Ollama form and the length of its JSON.
func (c *toolCache) get(spec agent.ToolSpec) (api.Tool, int, error) {
	key := toolKey{spec.Name, spec.Description, string(spec.Parameters)}
	c.mu.Lock()
	t, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return t.tool, t.size, nil
	}
	tool, err := toAPITool(spec)
	if err != nil {
		return api.Tool{}, 0, err
	}
	b, err := json.Marshal(tool)
	if err != nil {
		return api.Tool{}, 0, fmt.Errorf("ollama: tool %q: %w", spec.Name, err)
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedTools {
		c.m = make(map[toolKey]cachedTool)
	}
	c.m[key] = cachedTool{tool: tool, size: len(b)}
	c.mu.Unlock()
	return tool, len(b), nil
}
