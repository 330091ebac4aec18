package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// FuzzToolArguments: whatever arguments a client sends an agent tool, they
// are taken only when they are exactly what the schema says (strings,
// message present), and refused otherwise with words a model can act on.
func FuzzToolArguments(f *testing.F) {
	for _, seed := range []string{
		`{"message":"hi"}`, `{"message":"hi","context":"c","conversation":""}`, `{"message":7}`,
		`{"context":"no message"}`, `{"message":"hi","extra":1}`, `{"message":null}`, `{}`, `{"message":["a"],"conversation":{}}`,
	} {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, raw []byte, conversations bool) {
		var args map[string]any
		if json.Unmarshal(raw, &args) != nil {
			return
		}
		got, err := parseArgs(args, conversations)
		if err != nil {
			if agent.UserMessage(err) == "" || strings.Contains(agent.UserMessage(err), "internal error") {
				t.Fatalf("refusal without a message for a person: %v", err)
			}
			return
		}
		if _, ok := args["message"]; !ok {
			t.Fatalf("accepted arguments without a message: %s", raw)
		}
		for k, v := range args {
			if _, isString := v.(string); !isString && v != nil {
				t.Fatalf("accepted %s = %T", k, v)
			}
			if k == "conversation" && !conversations {
				t.Fatal("accepted a conversation for an agent without conversations")
			}
		}
		if m, _ := args["message"].(string); got.Message != m {
			t.Fatalf("message %q, want %q", got.Message, m)
		}
	})
}

// FuzzOpenState: a requestState opens only as sealed here, for its tool
// and principal, once; anything else a client makes up is refused.
func FuzzOpenState(f *testing.F) {
	s, err := mcpfill.NewSealer(nil, time.Minute, time.Now)
	if err != nil {
		f.Fatal(err)
	}
	good := s.Seal(mcpfill.Claims{Turn: "t", Seq: 1, Tool: "assistant", Principal: "p"})
	f.Add(good, "assistant", "p")
	f.Add(good, "other", "p")
	f.Add(good, "assistant", "q")
	f.Add(good[:len(good)-2]+"AA", "assistant", "p")
	f.Add("", "assistant", "p")
	f.Add("!!!", "assistant", "p")
	f.Fuzz(func(t *testing.T, state, tool, principal string) {
		fresh, err := mcpfill.NewSealer(nil, time.Minute, time.Now) // no state of the fuzzer's can be sealed by it
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := fresh.Open(state, tool, principal, nil); err == nil {
			t.Fatalf("a made-up state opened: %q", state)
		}
		c, _, err := s.Open(state, tool, principal, nil) // claimed, never settled: once
		if err == nil && (state != good || tool != "assistant" || principal != "p" || c.Turn != "t") {
			t.Fatalf("opened %q for %s/%s as %+v", state, tool, principal, c)
		}
	})
}
