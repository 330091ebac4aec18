package ollama

import (
	"fmt"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/server/agent"
)

// TestInfoCache: a changed model list (a model added, or replaced under
// its name) forgets every answer; the cache stays bounded.
func TestInfoCache(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	list := func(digests ...string) *api.ListResponse {
		lr := &api.ListResponse{}
		for i, d := range digests {
			lr.Models = append(lr.Models, api.ListModelResponse{Name: fmt.Sprintf("m%d", i), Digest: d})
		}
		return lr
	}
	var c infoCache
	has := func() bool { _, ok := c.get("m0", now); return ok }
	c.put("m0", agent.ModelInfo{Name: "m0"}, now)
	steps := []struct {
		name string
		list *api.ListResponse
		want bool
	}{
		{name: "first list", list: list("a"), want: true},
		{name: "same list", list: list("a"), want: true},
		{name: "a model added", list: list("a", "b"), want: false},
		{name: "same again", list: list("a", "b"), want: true},
		{name: "a model replaced", list: list("c", "b"), want: false},
	}
	for _, s := range steps {
		c.sawModels(s.list)
		if got := has(); got != s.want {
			t.Errorf("%s: cached = %v, want %v", s.name, got, s.want)
		}
		c.put("m0", agent.ModelInfo{Name: "m0"}, now)
	}
	for i := range 3 * maxCachedInfos {
		c.put(fmt.Sprint(i), agent.ModelInfo{}, now)
	}
	if n := len(c.entries); n > maxCachedInfos {
		t.Errorf("%d entries cached, want at most %d", n, maxCachedInfos)
	}
}
