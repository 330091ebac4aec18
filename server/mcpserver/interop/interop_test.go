package interop_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestInteropTypeScriptSDK drives the default agent "assistant" of a real
// "deskhand serve" (with tokens on) with the TypeScript SDK v1 (legacy era,
// with a session) and the TypeScript client v2 pinned to 2026-07-28
// (sessionless). The scripts are testdata/client-v1.mjs and
// testdata/client-v2.mjs; each check they print becomes a subtest. The
// fake Ollama's chat counter, read before and after each script, must grow
// by exactly what the flow's checks cost (chatsPerCheck), so a turn that is
// replayed or never reaches the model fails the test.
func TestInteropTypeScriptSDK(t *testing.T) {
	node := setupNode(t)
	bins := buildBinaries(t)
	ollama := startFakeOllama(t, bins.fakeOllama)
	d := startDeskhand(t, bins.deskhand, ollama)
	token := d.createToken(t, "interop")
	other := d.createToken(t, "interop-other") // for the foreign-handle check

	common := []string{"list_tools", "ask_first", "conversation_handle", "ask_followup", "followup_same_handle"}
	asks := []string{"elicitation_accept", "elicitation_decline"}
	for _, tc := range []struct {
		name, script string
		checks       []string
	}{
		{"v1-legacy", "client-v1.mjs", concat([]string{"connect", "no_token_rejected"}, common, []string{"session_continues", "foreign_handle", "blank_handle", "unknown_handle"}, asks, []string{"close"})},
		{"v2-modern", "client-v2.mjs", concat([]string{"connect", "no_token_rejected"}, common, []string{"foreign_handle", "blank_handle", "unknown_handle"}, asks, []string{"close"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fakeChats(t, ollama)
			run := runNode(t, node, []string{
				"DESKHAND_MCP_URL=" + d.url,
				"DESKHAND_MCP_TOKEN=" + token,
				"DESKHAND_MCP_OTHER_TOKEN=" + other,
				"DESKHAND_MCP_TOOL=assistant",
			}, tc.script)
			after := fakeChats(t, ollama)
			t.Logf("node %s took %s", tc.script, run.took.Round(10*time.Millisecond))
			judgeScript(t, run, tc.checks)
			judgeChats(t, tc.checks, before, after)
		})
	}
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// chatsPerCheck is how many /api/chat requests each check of the flow costs
// the fake Ollama: a turn without a question is one chat; a turn whose model
// asks the person is two (the ask_user call, then the answer after the tool
// result), however the answer travels (elicitation/create on the legacy era;
// InputRequiredResult and a retry on 2026-07-28, which must resume the
// parked turn, not replay it). A refused call (no token, unknown or foreign
// handle) and the checks not listed cost none.
var chatsPerCheck = map[string]int{
	"ask_first":           1,
	"ask_followup":        1,
	"session_continues":   1,
	"blank_handle":        1,
	"elicitation_accept":  2,
	"elicitation_decline": 2,
}

// judgeChats checks that the fake Ollama served exactly the chats the flow
// accounts for: more means a turn ran twice (a replay), fewer that a turn
// never reached the model.
func judgeChats(t *testing.T, checks []string, before, after int64) {
	t.Helper()
	var want int64
	var parts []string
	for _, c := range checks {
		if n := chatsPerCheck[c]; n > 0 {
			want += int64(n)
			parts = append(parts, fmt.Sprintf("%s=%d", c, n))
		}
	}
	if got := after - before; got != want {
		t.Errorf("the fake Ollama served %d chats during the script (stats: %d before, %d after), want %d (%s)",
			got, before, after, want, strings.Join(parts, " + "))
		return
	}
	t.Logf("the fake Ollama served %d chats, as expected (%s)", after-before, strings.Join(parts, " + "))
}

// fakeChats reads the fake Ollama's chat counter (GET /_fake/stats).
func fakeChats(t *testing.T, ollamaURL string) int64 {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(strings.TrimSuffix(ollamaURL, "/") + "/_fake/stats")
	if err != nil {
		t.Fatalf("fake Ollama stats: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("fake Ollama stats: %v", err)
	}
	var stats struct {
		Chats *int64 `json:"chats"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &stats) != nil || stats.Chats == nil {
		t.Fatalf("GET %s/_fake/stats: %s %s, want 200 {\"chats\": N}", ollamaURL, resp.Status, body)
	}
	return *stats.Chats
}

// scriptCheck is one line a client script prints.
type scriptCheck struct {
	Check  string          `json:"check"`
	OK     bool            `json:"ok"`
	Detail json.RawMessage `json:"detail"`
}

var summaryLine = regexp.MustCompile(`^(\d+) passed, (\d+) failed$`)

// judgeScript turns the script's checks into subtests, and fails when a
// wanted check is missing, the summary disagrees or the script failed.
func judgeScript(t *testing.T, run scriptRun, want []string) {
	t.Helper()
	seen := map[string]bool{}
	var summary []string
	for _, line := range strings.Split(strings.TrimSpace(run.stdout), "\n") {
		line = strings.TrimSpace(line)
		var c scriptCheck
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &c) == nil && c.Check != "" {
			seen[c.Check] = true
			t.Run(c.Check, func(t *testing.T) {
				if !c.OK {
					t.Errorf("failed: %s", c.Detail)
					return
				}
				t.Logf("ok: %s", c.Detail)
			})
			continue
		}
		if m := summaryLine.FindStringSubmatch(line); m != nil {
			summary = m
		}
	}
	for _, name := range want {
		if !seen[name] {
			t.Errorf("the script never reported the check %q", name)
		}
	}
	switch {
	case summary == nil:
		t.Errorf("no final \"N passed, M failed\" line")
	case summary[2] != "0":
		t.Errorf("script summary: %s", summary[0])
	default:
		if n, _ := strconv.Atoi(summary[1]); n < len(want) {
			t.Errorf("script summary %q counts fewer checks than the %d wanted", summary[0], len(want))
		}
	}
	if run.err != nil {
		t.Errorf("script failed: %v", run.err)
	}
	if t.Failed() {
		t.Logf("script output:\n%s", run.output())
	}
}

// conformanceScenarios are the scenarios of @modelcontextprotocol/conformance
// 0.1.16 that the real app passes as it is: they need no fixture tools,
// resources, prompts or optional capabilities.
var conformanceScenarios = []string{
	"server-initialize",
	"ping",
	"tools-list",
	"server-sse-multiple-streams",
	"dns-rebinding-protection",
	"resources-list",
	"prompts-list",
}

// conformanceCheck is one entry of a scenario's checks.json.
type conformanceCheck struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	Status       string          `json:"status"`
	ErrorMessage string          `json:"errorMessage"`
	Details      json.RawMessage `json:"details"`
}

// TestConformanceSuite runs the official MCP conformance CLI against
// "deskhand serve --insecure-no-auth" (the suite sends no token), one
// subtest per scenario. A scenario passes when it has a SUCCESS check and no
// FAILURE or WARNING, which is how the CLI's baseline logic judges
// scenarios (its own "Passed: N/M" line ignores warnings).
func TestConformanceSuite(t *testing.T) {
	node := setupNode(t)
	node.require22(t)
	cli := conformanceCLI(t, node.dir, "@modelcontextprotocol/conformance")
	bins := buildBinaries(t)
	ollama := startFakeOllama(t, bins.fakeOllama)
	d := startDeskhand(t, bins.deskhand, ollama, "--insecure-no-auth")
	runConformance(t, node, cli, d.url, conformanceScenarios)
}

// runConformance runs each scenario as a subtest and judges its checks.
func runConformance(t *testing.T, node nodeSetup, cli, url string, scenarios []string) {
	for _, scenario := range scenarios {
		t.Run(scenario, func(t *testing.T) {
			out := t.TempDir()
			run := runNode(t, node, nil, cli, "server", "--url", url, "--scenario", scenario, "-o", out)
			t.Logf("conformance %s took %s", scenario, run.took.Round(10*time.Millisecond))
			defer func() {
				if t.Failed() {
					t.Logf("conformance CLI output:\n%s", run.output())
				}
			}()
			files, _ := filepath.Glob(filepath.Join(out, "server-"+scenario+"-*", "checks.json"))
			if len(files) != 1 {
				t.Fatalf("want one checks.json for %s under %s, found %d (CLI: %v)", scenario, out, len(files), run.err)
			}
			var checks []conformanceCheck
			readJSON(t, files[0], &checks)
			judgeScenario(t, checks)
			if run.err != nil {
				t.Errorf("conformance CLI failed: %v", run.err)
			}
		})
	}
}

func judgeScenario(t *testing.T, checks []conformanceCheck) {
	t.Helper()
	if len(checks) == 0 {
		t.Fatal("the scenario produced no checks")
	}
	successes := 0
	for _, c := range checks {
		line := fmt.Sprintf("%-7s %s: %s", c.Status, c.ID, c.Description)
		if c.ErrorMessage != "" {
			line += " (" + c.ErrorMessage + ")"
		}
		switch c.Status {
		case "SUCCESS":
			successes++
			t.Log(line)
		case "INFO", "SKIPPED":
			t.Log(line)
		default: // FAILURE, WARNING, or a status this test does not know
			t.Errorf("%s\ndetails: %s", line, c.Details)
		}
	}
	if successes == 0 {
		t.Errorf("no check succeeded (%d checks, none SUCCESS): the scenario verified nothing", len(checks))
	}
}

// conformanceCLI is the "conformance" bin entry of the package installed
// under node_modules/pkg.
func conformanceCLI(t *testing.T, dir, pkgName string) string {
	t.Helper()
	pkgDir := filepath.Join(dir, "node_modules", filepath.FromSlash(pkgName))
	var pkg struct {
		Version string          `json:"version"`
		Bin     json.RawMessage `json:"bin"`
	}
	readJSON(t, filepath.Join(pkgDir, "package.json"), &pkg)
	var bin string
	if json.Unmarshal(pkg.Bin, &bin) != nil {
		var bins map[string]string
		if err := json.Unmarshal(pkg.Bin, &bins); err != nil || bins["conformance"] == "" {
			t.Fatalf("@modelcontextprotocol/conformance %s has no \"conformance\" bin entry: %s", pkg.Version, pkg.Bin)
		}
		bin = bins["conformance"]
	}
	t.Logf("@modelcontextprotocol/conformance %s: %s", pkg.Version, bin)
	return filepath.Join(pkgDir, filepath.FromSlash(bin))
}
