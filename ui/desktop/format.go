package desktop

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// agentLabel is how an agent reads in lists and the tray.
func agentLabel(a agent.Agent) string {
	if a.Name == "" || a.Name == a.Slug {
		return a.Slug
	}
	return fmt.Sprintf("%s (%s)", a.Name, a.Slug)
}

// pendingLabel is the tray's entry for the questions waiting.
func pendingLabel(n int) string {
	switch n {
	case 0:
		return "No questions waiting"
	case 1:
		return "1 question waiting…"
	}
	return fmt.Sprintf("%d questions waiting…", n)
}

// providerModelsFound says what a provider listed for the model picker,
// and what to do next: pick one, or get one (Ollama pulls, Deskhand for
// the provider "ollama"; other servers load their own).
func providerModelsFound(provider string, ollama bool, n int) string {
	switch {
	case n == 0 && ollama && provider == agent.OllamaProvider: // the one Deskhand pulls to
		return provider + " has no model installed: type a name, such as llama3.2, and press Pull (or run: ollama pull llama3.2)."
	case n == 0 && ollama:
		return provider + " has no model installed: on that computer, run: ollama pull llama3.2; then press Refresh."
	case n == 0:
		return provider + " lists no model: load one in " + provider + ", then press Refresh, or type a model's name."
	case n == 1:
		return provider + " lists 1 model: pick it above."
	}
	return fmt.Sprintf("%s lists %d models: pick one above.", provider, n)
}

// pickHint is the model hint once the server listed its models: a model
// picked among them needs none.
func pickHint(provider string, ollama bool, names []string, picked string) string {
	if slices.Contains(names, picked) {
		return ""
	}
	return providerModelsFound(provider, ollama, len(names))
}

// capabilitiesText says what a model can do, as its server tells.
func capabilitiesText(m agent.ModelInfo) string {
	window := "unknown"
	if m.ContextLength > 0 {
		window = fmt.Sprintf("%d tokens", m.ContextLength)
	}
	return fmt.Sprintf("calls tools: %s · structured output: %s · context window: %s",
		capabilityWord(m.Tools), capabilityWord(m.StructuredOutput), window)
}

func capabilityWord(c agent.Capability) string {
	if c == agent.CapabilityUnknown {
		return "unknown"
	}
	return string(c)
}

// pauseLabel is the tray's pause switch.
func pauseLabel(paused bool) string {
	if paused {
		return "Resume serving"
	}
	return "Pause serving"
}

// questionTitle heads a question's popup.
func questionTitle(q agent.Question) string {
	if q.Kind == agent.KindApproval {
		return fmt.Sprintf("%s asks to run %s", q.Agent, q.Tool)
	}
	return q.Agent + " asks"
}

// expiresIn says how long a question waits, for its row in the
// Questions tab.
func expiresIn(q agent.Question, now time.Time) string {
	left := q.ExpiresAt.Sub(now).Round(time.Second)
	if left <= 0 {
		return "Time is up"
	}
	return clock(left) + " left"
}

// slugProblem checks a slug as it is typed: "" when it can name a tool.
func slugProblem(slug string) string {
	if slug == "" {
		return ""
	}
	if err := agent.CheckSlug(slug); err != nil {
		return agent.UserMessage(err)
	}
	return ""
}

// closedNote says why a question's popup closed, when someone else acted.
func closedNote(e agent.Event) string {
	switch {
	case e.By == agent.ByClient && e.Text == string(agent.QuestionDeclined):
		return "The client declined: " + e.Agent + " was told."
	case e.By == agent.ByClient:
		return "The client answered " + e.Agent + "'s question first."
	case e.Text == string(agent.QuestionExpired):
		return "Nobody answered " + e.Agent + "'s question in time."
	case e.Text == string(agent.QuestionCancelled):
		return e.Agent + "'s question was withdrawn: its turn ended."
	}
	return ""
}

// schemaProblem checks a response schema as it is typed: "" when it is
// empty or a JSON object, else what is wrong.
func schemaProblem(text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return ""
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return "not valid JSON: " + err.Error()
	}
	if _, ok := v.(map[string]any); !ok {
		return "a response schema is a JSON object, like {\"type\": \"object\", …}"
	}
	return ""
}

// editorFields are the agent editor's values as typed.
type editorFields struct {
	Name, Slug, Description, Prompt, Model, Schema string
	Backend                                        agent.Backend // BackendProvider or BackendClient
	Provider                                       string
	Routing                                        agent.Routing
	Conversations, Enabled                         bool
	Tools                                          []agent.AgentTool
	Folders                                        string // one per line
	ReachableHosts                                 string // host:port, one per line
	Starters                                       string // starter prompts, one per line
	ClientMayApprove                               bool
	LogArguments                                   bool     // keep calls' arguments and answers in the activity log
	Icon                                           string   // an emoji, or an image as a data: URI
	Team                                           []string // the IDs of the agents it may hand work to, in order
}

// fieldsOf is what the editor shows of an agent: one saved before
// providers ("ollama" backend, no provider) runs on the provider "ollama";
// no routing is the core's default, agent.RouteClient.
func fieldsOf(a agent.Agent) editorFields {
	backend := agent.BackendProvider
	if a.Backend == agent.BackendClient {
		backend = agent.BackendClient
	}
	return editorFields{Name: a.Name, Slug: a.Slug, Description: a.Description, Prompt: a.Prompt, Model: a.Model,
		Schema: string(a.ResponseSchema), Backend: backend, Provider: cmp.Or(a.Provider, agent.OllamaProvider), Routing: cmp.Or(a.Routing, agent.RouteClient), Conversations: a.Conversations, Enabled: a.Enabled,
		Tools: a.Tools, Folders: strings.Join(a.Folders, "\n"), Starters: strings.Join(a.StarterPrompts, "\n"),
		ReachableHosts: strings.Join(a.ReachableHosts, "\n"), ClientMayApprove: a.ClientMayApprove, Icon: a.Icon,
		LogArguments: a.LogArguments, Team: a.Team}
}

// lines reads a list typed one item per line, blank lines ignored.
func lines(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if f := strings.TrimSpace(line); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// apply puts the editor's values on base (which keeps what the editor
// does not show); an invalid schema is refused before anything is saved.
func (f editorFields) apply(base agent.Agent) (agent.Agent, error) {
	if p := schemaProblem(f.Schema); p != "" {
		return agent.Agent{}, agent.Userf(nil, "response schema: %s", p)
	}
	base.Name, base.Slug, base.Description, base.Prompt, base.Model = f.Name, f.Slug, f.Description, f.Prompt, f.Model
	base.Backend, base.Provider, base.Routing, base.Conversations, base.Enabled = f.Backend, f.Provider, f.Routing, f.Conversations, f.Enabled
	base.Tools, base.Folders, base.StarterPrompts = f.Tools, lines(f.Folders), lines(f.Starters)
	base.Team = f.Team
	base.ReachableHosts, base.ClientMayApprove = lines(f.ReachableHosts), f.ClientMayApprove
	base.Icon, base.LogArguments = f.Icon, f.LogArguments
	base.ResponseSchema = nil
	if s := strings.TrimSpace(f.Schema); s != "" {
		base.ResponseSchema = json.RawMessage(s)
	}
	return base, nil
}

// whoIsAsked says who an agent's questions and approvals go to.
func whoIsAsked(routing agent.Routing, clientMayApprove bool) string {
	switch routing {
	case agent.RouteDecline:
		return "Nobody is asked: a turn that needs a person's answer or approval fails."
	case agent.RouteDesktop:
		return "Questions and approvals of tool calls come to you here, on this computer."
	}
	if clientMayApprove {
		return "Questions and approvals of tool calls go to the person using the calling client (when it can ask them), and come to you here too: the first answer counts. Allow this only for clients you trust: text an agent reads could make a client approve by itself."
	}
	return "Questions go to the person using the calling client (when it can ask them), and come to you here too: the first answer counts. Approvals of tool calls come to you here only."
}

// conversationLine is a conversation's row in the list: its title on
// the first line; agent and client, then state and last activity (never
// cut off) on the second.
type conversationLine struct {
	Title, Meta, State, When string
	Failed, Waiting          bool
}

// conversationLabel is a conversation's row in the list.
func conversationLabel(c agent.ConversationSummary, agentName, client string, waiting bool, now time.Time) conversationLine {
	l := conversationLine{Title: cmp.Or(c.Title, "(untitled)"), Meta: agentName + " · " + client, Waiting: waiting, When: lastActive(c.UpdatedAt, now)}
	switch {
	case waiting:
		l.State = "needs an answer"
	case c.LastStatus == "":
		l.State = "new"
	case c.LastStatus == agent.TurnCompleted:
		l.State = "done"
	case c.LastStatus == agent.TurnCancelled:
		l.State, l.Failed = "stopped", true
	default:
		l.State, l.Failed = string(c.LastStatus), turnFailed(c.LastStatus)
	}
	return l
}

// lastActive is a short time of last activity: the hour today, else the day.
func lastActive(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	switch {
	case t.YearDay() == now.YearDay() && t.Year() == now.Year():
		return t.Format("15:04")
	case t.Year() == now.Year():
		return t.Format("Jan 2")
	}
	return t.Format("Jan 2 2006")
}

// clientName names a conversation's principal for people.
func clientName(principal string, clients []agent.Client) string {
	if principal == agent.LocalPrincipal {
		return "this computer"
	}
	for _, c := range clients {
		if c.ID == principal {
			return c.Name
		}
	}
	return "a revoked client"
}

// filterConversations keeps those whose title or agent (as agentOf
// names it) contains the text.
func filterConversations(all []agent.ConversationSummary, text string, agentOf func(id string) string) []agent.ConversationSummary {
	text = strings.ToLower(strings.TrimSpace(text))
	if text == "" {
		return all
	}
	var out []agent.ConversationSummary
	for _, c := range all {
		if strings.Contains(strings.ToLower(c.Title), text) || strings.Contains(strings.ToLower(agentOf(c.AgentID)), text) {
			out = append(out, c)
		}
	}
	return out
}

// turnSummary is a turn's outcome and cost, in a line.
func turnSummary(t agent.Turn) string {
	s := turnStateName(t.Status)
	if d := t.Duration(); d > 0 {
		s += " in " + d.Round(10*time.Millisecond).String()
	}
	if t.Model != "" {
		s += " on " + t.Model
	}
	if t.PromptTokens > 0 || t.OutputTokens > 0 {
		s += fmt.Sprintf(" · read %s, wrote %d", countOf(t.PromptTokens, "token"), t.OutputTokens)
	}
	if t.ToolCalls > 0 {
		s += " · " + countOf(t.ToolCalls, "tool call")
	}
	if t.Trimmed > 0 {
		s += fmt.Sprintf(" · the model did not see the %s of the conversation (its context window is full)", countOf(t.Trimmed, "oldest message"))
	}
	if t.Error != "" {
		s += ": " + t.Error
	}
	return s
}

// turnStateName names a turn's state for people.
func turnStateName(s agent.TurnStatus) string {
	switch s {
	case agent.TurnCompleted:
		return "Done"
	case agent.TurnFailed:
		return "Failed"
	case agent.TurnCancelled:
		return "Stopped"
	case agent.TurnInterrupted:
		return "Interrupted"
	case agent.TurnRunning:
		return "Running"
	}
	return string(s)
}

// clientLabel is a client's second line: when its token was made, when
// it was last seen, and how many tools it called today (calls < 0: not
// known).
func clientLabel(c agent.Client, calls int, now time.Time) string {
	label := fmt.Sprintf("created %s · %s", c.CreatedAt.Local().Format("Jan 2 2006"), lastSeen(c.LastUsedAt, now))
	if calls >= 0 {
		label += " · " + callsToday(calls)
	}
	return label
}

// lastSeen says when a client last called, coarsely: "last seen 5
// minutes ago", or "never used".
func lastSeen(used, now time.Time) string {
	if used.IsZero() {
		return "never used"
	}
	d := now.Sub(used)
	switch {
	case d < time.Minute:
		return "last seen just now"
	case d < time.Hour:
		return "last seen " + countOf(int(d.Minutes()), "minute") + " ago"
	case d < 24*time.Hour:
		return "last seen " + countOf(int(d.Hours()), "hour") + " ago"
	case d < 48*time.Hour:
		return "last seen yesterday"
	}
	return "last seen " + countOf(int(d.Hours()/24), "day") + " ago"
}

// callsToday says how many tools a client called today.
func callsToday(n int) string {
	if n == 0 {
		return "no calls today"
	}
	return countOf(n, "call") + " today"
}

// startOfDay is midnight of t's day, where t is.
func startOfDay(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// addrProblem checks the address setting: "" when fine. A non-loopback
// address needs tokens on.
func addrProblem(addr string, insecure bool) string {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return ""
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return fmt.Sprintf("address %q is not HOST:PORT, e.g. 127.0.0.1:7345", addr)
	}
	if host != "localhost" && !isLoopbackIP(host) && insecure {
		return "a non-loopback address requires tokens: turn open local development off, or use 127.0.0.1"
	}
	return ""
}

func isLoopbackIP(host string) bool {
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// countOf is "1 thing" or "n things".
func countOf(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
