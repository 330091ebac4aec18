package connect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
	"gopkg.in/yaml.v3"
)

// disabledIn says why the client will not use our entry although it is in
// its file ("" when nothing turns it off): the entry's own switch
// (opencode, Zed, Goose, Codex) or the client's list of servers it
// excludes or allows (Gemini CLI, Qwen Code). data has parsed already; a
// value of an unexpected type is taken as not turning the entry off.
func disabledIn(c Client, data []byte, name string) string {
	switch c.ID {
	case OpenCode.ID, Zed.ID, Gemini.ID, Qwen.ID:
		std, err := hujson.Standardize(bytes.Clone(data))
		var doc map[string]any
		if err != nil || json.Unmarshal(std, &doc) != nil {
			return ""
		}
		switch c.ID {
		case OpenCode.ID:
			if enabled, ok := field(doc, "mcp", name, "enabled").(bool); ok && !enabled {
				return `its entry says "enabled": false`
			}
			if disabled, ok := field(doc, "mcp", "servers", name, "disabled").(bool); ok && disabled {
				return `its entry under mcp.servers says "disabled": true`
			}
		case Zed.ID:
			if enabled, ok := field(doc, "context_servers", name, "enabled").(bool); ok && !enabled {
				return `its entry says "enabled": false`
			}
		default:
			return excludedBy(doc, name)
		}
	case Codex.ID:
		var doc map[string]any
		if toml.Unmarshal(data, &doc) != nil {
			return ""
		}
		if enabled, ok := field(doc, "mcp_servers", name, "enabled").(bool); ok && !enabled {
			return "its entry says enabled = false"
		}
	case Goose.ID:
		var doc map[string]any
		if yaml.Unmarshal(data, &doc) != nil {
			return ""
		}
		if enabled, ok := field(doc, "extensions", name, "enabled").(bool); ok && !enabled {
			return "its extension says enabled: false"
		}
	}
	return ""
}

// excludedBy reads Gemini CLI's (and Qwen Code's) lists of the servers it
// may not or only may start: mcp.excluded and mcp.allowed, and the older
// excludeMCPServers and allowMCPServers. Names may be globs.
func excludedBy(doc map[string]any, name string) string {
	for _, key := range [][]string{{"mcp", "excluded"}, {"excludeMCPServers"}} {
		if matches(field(doc, key...), name) {
			return fmt.Sprintf("its settings exclude it (%s)", joinKey(key))
		}
	}
	for _, key := range [][]string{{"mcp", "allowed"}, {"allowMCPServers"}} {
		if list, ok := field(doc, key...).([]any); ok && len(list) > 0 && !matches(list, name) {
			return fmt.Sprintf("its settings allow only other servers (%s)", joinKey(key))
		}
	}
	return ""
}

// matches reports whether a list of names or globs holds name.
func matches(list any, name string) bool {
	names, _ := list.([]any)
	for _, n := range names {
		if s, ok := n.(string); ok {
			if ok, _ := path.Match(s, name); ok || s == name {
				return true
			}
		}
	}
	return false
}

// field walks nested objects; nil when a key is missing.
func field(doc map[string]any, keys ...string) any {
	var v any = doc
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func joinKey(key []string) string { return strings.Join(key, ".") }
