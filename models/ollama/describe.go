package ollama

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/types/model"

	"github.com/deskhand/deskhand/server/agent"
)

// ErrNoToolSupport is the Err of the *agent.UserError Chat returns, before
// sending anything, when the request has tools and Ollama says the model
// cannot call them.
var ErrNoToolSupport = errors.New("ollama: the model does not have the tools capability")

const (
	// infoTTL is how long what /api/show said of a model is kept: a model
	// can be replaced under the same name (ollama pull, ollama create)
	// without Deskhand seeing the list change.
	infoTTL = 5 * time.Minute
	// maxCachedInfos bounds the cache; past it, the cache starts over.
	maxCachedInfos = 64
	// maxModelsChecked bounds the installed models whose capabilities are
	// read to name those that can call tools.
	maxModelsChecked = 16
	// maxModelsNamed bounds the models named in that message.
	maxModelsNamed = 6
	// maxContextLength is the largest context length believed from
	// /api/show (2^24 tokens); a larger or odd value is taken as unknown.
	maxContextLength = 1 << 24
)

// infoCache keeps what /api/show said per model name.
type infoCache struct {
	mu      sync.Mutex
	entries map[string]cachedInfo
	models  string // the last model list seen (names, digests, dates)
	seen    bool   // whether a list was seen
}

type cachedInfo struct {
	info agent.ModelInfo
	at   time.Time
}

func (c *infoCache) get(name string, now time.Time) (agent.ModelInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[name]
	if !ok || now.Sub(e.at) >= infoTTL || now.Before(e.at) {
		return agent.ModelInfo{}, false
	}
	return e.info, true
}

func (c *infoCache) put(name string, info agent.ModelInfo, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedInfos {
		c.entries = make(map[string]cachedInfo)
	}
	c.entries[name] = cachedInfo{info: info, at: now}
}

// clear forgets every model.
func (c *infoCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
}

// sawModels forgets every model when the installed models changed since
// the last list.
func (c *infoCache) sawModels(lr *api.ListResponse) {
	var b strings.Builder
	for _, mr := range lr.Models {
		fmt.Fprintf(&b, "%s\x00%s\x00%d\n", mr.Name, mr.Digest, mr.ModifiedAt.UnixNano())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen && b.String() != c.models {
		c.entries = nil
	}
	c.models, c.seen = b.String(), true
}

// DescribeModel says what Ollama says of one model (POST /api/show): whether
// it calls tools (the "tools" capability), whether it answers in a JSON
// Schema's shape (every model with the "completion" capability: Ollama
// constrains any completion model to a format's schema), and its context
// length (model_info's "<general.architecture>.context_length"). An Ollama
// too old to list capabilities gives CapabilityUnknown. Answers are kept a
// few minutes, and forgotten when the list of installed models changes.
func (m *Model) DescribeModel(ctx context.Context, name string) (agent.ModelInfo, error) {
	info, err := m.describe(ctx, name)
	if err != nil {
		return agent.ModelInfo{}, m.userError(ctx, err, name)
	}
	return info, nil
}

// describe is DescribeModel with the client's error.
func (m *Model) describe(ctx context.Context, name string) (agent.ModelInfo, error) {
	if info, ok := m.infos.get(name, m.now()); ok {
		return info, nil
	}
	sr, err := m.client.Show(ctx, &api.ShowRequest{Model: name})
	if err != nil {
		return agent.ModelInfo{}, err
	}
	info := parseShow(name, sr)
	m.infos.put(name, info, m.now())
	return info, nil
}

// parseShow reads an /api/show answer, which is not trusted: odd values
// are taken as unknown.
func parseShow(name string, sr *api.ShowResponse) agent.ModelInfo {
	info := agent.ModelInfo{Name: name, ContextLength: contextLength(sr.ModelInfo)}
	if len(sr.Capabilities) == 0 {
		return info // an Ollama too old to list capabilities
	}
	has := func(c model.Capability) agent.Capability {
		if slices.Contains(sr.Capabilities, c) {
			return agent.CapabilityYes
		}
		return agent.CapabilityNo
	}
	info.Tools = has(model.CapabilityTools)
	info.StructuredOutput = has(model.CapabilityCompletion)
	return info
}

// contextLength reads "<arch>.context_length", arch being
// "general.architecture"; without an architecture, the only key ending in
// ".context_length". 0 when absent or not a plausible length.
func contextLength(mi map[string]any) int {
	var v any
	if arch, ok := mi["general.architecture"].(string); ok && arch != "" {
		v = mi[arch+".context_length"]
	} else {
		n := 0
		for k, kv := range mi {
			if strings.HasSuffix(k, ".context_length") {
				v, n = kv, n+1
			}
		}
		if n != 1 {
			return 0
		}
	}
	f, ok := v.(float64) // what encoding/json gives for a number in a map[string]any
	if !ok || f != math.Trunc(f) || f < 1 || f > maxContextLength {
		return 0
	}
	return int(f)
}

// refuseTools is the error for tools sent to a model that cannot call them,
// naming installed models that can.
func (m *Model) refuseTools(ctx context.Context, name string) error {
	var (
		able    []string
		checked = true // every installed model was looked at
	)
	if lr, err := m.client.List(ctx); err == nil {
		m.infos.sawModels(lr)
		for i, mr := range lr.Models {
			if i == maxModelsChecked {
				checked = false
				break
			}
			if mr.Name == name || !printable(mr.Name) {
				continue
			}
			if info, err := m.describe(ctx, mr.Name); err == nil && info.Tools == agent.CapabilityYes {
				able = append(able, mr.Name)
			}
		}
	} else {
		checked = false
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	msg := fmt.Sprintf("model '%s' cannot call tools, and this agent has tools", name)
	switch {
	case len(able) > maxModelsNamed:
		msg += fmt.Sprintf(" — switch it to a model that can, such as %s (and %d more), or take its tools off", strings.Join(able[:maxModelsNamed], ", "), len(able)-maxModelsNamed)
	case len(able) > 0:
		msg += fmt.Sprintf(" — switch it to a model that can (%s) or take its tools off", strings.Join(able, ", "))
	case checked:
		msg += " — and no installed model can: pull one that can (for example 'ollama pull qwen3') or take the agent's tools off"
	default:
		msg += " — switch it to a model that can (for example 'ollama pull qwen3') or take its tools off"
	}
	return agent.Userf(ErrNoToolSupport, "%s", msg)
}

// printable reports whether a name from the server is fit to show.
func printable(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}
