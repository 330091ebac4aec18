package bench

import (
	"fmt"
	"testing"
)

// TestCallAllocationsDoNotGrow checks that nothing on a call's path
// allocates in proportion to the agents or the clients Deskhand knows: a
// call made with 1,000 agents and 1,000 clients allocates about what one
// made with one of each does (issue 20, item 2). The figure counts every
// allocation of the process while the calls run, the bench's client and
// the store's writer included, so the two are compared within a margin.
func TestCallAllocationsDoNotGrow(t *testing.T) {
	if testing.Short() {
		t.Skip("sets up 1,000 agents and 1,000 clients")
	}
	// margin is how many more allocations a call may make with the large
	// catalog: far fewer than one per agent or per client.
	const margin = 50
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			small, large := callAllocs(t, era, 1, 1), callAllocs(t, era, 1000, 1000)
			t.Logf("allocations per call: %.0f with 1 agent and 1 client, %.0f with 1,000 of each", small, large)
			if large > small+margin {
				t.Errorf("a call allocates %.0f times with 1,000 agents and 1,000 clients, %.0f with one of each: more than %d apart", large, small, margin)
			}
		})
	}
}

// callAllocs is the allocations per call, new conversations and continued
// ones alternating, on a Deskhand serving agents agents to clients
// clients.
func callAllocs(t *testing.T, era string, agents, clients int) float64 {
	tgt := deskhandWith(t, agents, clients)
	c := connect(t, tgt, era)
	res, err := callTool(c, tgt.tool, map[string]any{"message": "warm up", "conversation": ""})
	if err != nil {
		t.Fatal(err)
	}
	handle := conversationHandle(res)
	var failed error
	i := 0
	n := testing.AllocsPerRun(200, func() {
		i++
		h := ""
		if i%2 == 0 {
			h = handle
		}
		if _, err := callTool(c, tgt.tool, map[string]any{"message": fmt.Sprintf("call %d", i), "conversation": h}); err != nil {
			failed = err
		}
	})
	if failed != nil {
		t.Fatal(failed)
	}
	return n
}
