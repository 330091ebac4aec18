package toolservers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// MaxToolNameLength is the longest tool name the model APIs accept
// (OpenAI and Anthropic: 64 characters of [a-zA-Z0-9_-]).
const MaxToolNameLength = 64

// separator joins a server's name and its tool's name.
const separator = "__"

// ToolRef names one tool of one server, as the server calls it.
type ToolRef struct {
	Server string
	Tool   string
}

// ToolName is the name the model sees for a server's tool: server__tool
// when that is at most 64 characters of [a-zA-Z0-9_-]. Otherwise the
// tool's name is made to fit (each other character becomes '_', the end is
// cut) and a short hash of the original pair is added, so that two tools
// that read alike stay apart: the result is always the same for the same
// pair. The server's name must be valid ([Config.Validate]).
func ToolName(server, tool string) string {
	return toolName(server, tool, 8)
}

// toolName is ToolName with a hash of hexLen characters when one is needed.
func toolName(server, tool string, hexLen int) string {
	clean := sanitize(tool)
	full := server + separator + clean
	if clean == tool && len(full) <= MaxToolNameLength && hexLen == 8 {
		return full
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:])[:hexLen]
	keep := MaxToolNameLength - len(server) - len(separator) - len(suffix)
	if keep < 0 {
		keep = 0
	}
	if len(clean) > keep {
		clean = clean[:keep]
	}
	return server + separator + clean + suffix
}

// sanitize replaces each character outside [a-zA-Z0-9_-] with '_'.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// NameTable holds the model-facing names of one agent's set of server
// tools, unique within the set, and maps them back.
type NameTable struct {
	names map[ToolRef]string
	refs  map[string]ToolRef
}

// NewNameTable names each tool of the set with [ToolName]. Should two
// names still meet (a server's own tool named like another's shortened
// name, or a hash collision), the tools involved get a longer hash; the
// result depends only on the set, not on its order.
func NewNameTable(refs []ToolRef) (*NameTable, error) {
	sorted := slices.Clone(refs)
	slices.SortFunc(sorted, func(a, b ToolRef) int {
		if c := strings.Compare(a.Server, b.Server); c != 0 {
			return c
		}
		return strings.Compare(a.Tool, b.Tool)
	})
	sorted = slices.Compact(sorted)
	t := &NameTable{names: map[ToolRef]string{}, refs: map[string]ToolRef{}}
	for _, r := range sorted {
		t.names[r] = ToolName(r.Server, r.Tool)
	}
	for _, hexLen := range []int{16, 32, 64} {
		byName := map[string][]ToolRef{}
		for _, r := range sorted {
			byName[t.names[r]] = append(byName[t.names[r]], r)
		}
		clash := false
		for name, group := range byName {
			if len(group) < 2 {
				continue
			}
			clash = true
			for _, r := range group {
				// A tool whose plain name is this one keeps it.
				if r.Server+separator+r.Tool != name {
					t.names[r] = toolName(r.Server, r.Tool, hexLen)
				}
			}
		}
		if !clash {
			for r, n := range t.names {
				t.refs[n] = r
			}
			return t, nil
		}
	}
	return nil, fmt.Errorf("cannot give the tools distinct names")
}

// Name is the model-facing name of a tool of the set ("" if it is not in
// the set).
func (t *NameTable) Name(r ToolRef) string { return t.names[r] }

// Lookup finds the tool a model-facing name stands for.
func (t *NameTable) Lookup(name string) (ToolRef, bool) {
	r, ok := t.refs[name]
	return r, ok
}

// Annotations are a tool's hints about its behaviour, as its server
// declares them (nil: not said). They are hints from a server Deskhand
// does not control, never guarantees.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// ReadOnly reports whether the server says the tool changes nothing.
func (a Annotations) ReadOnly() bool { return a.ReadOnlyHint != nil && *a.ReadOnlyHint }

// ToolInfo is one tool of a server, as listed by it.
type ToolInfo struct {
	Server string
	Tool   string // the server's name for it
	Name   string // what the model sees: ToolName(Server, Tool)
	Title  string
	// Description and InputSchema (a JSON Schema object) are the
	// server's.
	Description string
	InputSchema json.RawMessage
	Annotations Annotations
	// Hash identifies the definition: sha256 over a canonical JSON of
	// the tool's name, description, input schema and annotations. A
	// tool whose Hash changed since the person attached it is not the
	// tool they approved.
	Hash string
}

// DefinitionHash computes [ToolInfo.Hash]: "sha256:" and the hex digest
// of {"annotations":…,"description":…,"inputSchema":…,"name":…}, with
// every object's keys sorted and no spaces, so that the same definition
// hashes the same whatever order or spacing the server used.
func DefinitionHash(tool, description string, inputSchema json.RawMessage, a Annotations) (string, error) {
	var schema any
	if len(bytes.TrimSpace(inputSchema)) > 0 {
		if err := json.Unmarshal(inputSchema, &schema); err != nil {
			return "", fmt.Errorf("input schema of %s: %w", tool, err)
		}
	}
	ann, err := json.Marshal(a)
	if err != nil {
		return "", err
	}
	var annAny any
	if err := json.Unmarshal(ann, &annAny); err != nil {
		return "", err
	}
	// encoding/json writes map keys sorted; without HTML escaping the
	// text is what other languages' sorted compact JSON writes.
	var canon bytes.Buffer
	enc := json.NewEncoder(&canon)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{
		"name": tool, "description": description, "inputSchema": schema, "annotations": annAny,
	}); err != nil {
		return "", err
	}
	sum := sha256.Sum256(bytes.TrimSuffix(canon.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}
