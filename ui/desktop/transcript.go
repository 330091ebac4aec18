package desktop

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/deskhand/deskhand/server/agent"
)

// speakers name who talks in a conversation: the person or client that
// called, and the agent.
type speakers struct {
	User  string // "You" on this computer, else the client's name
	Agent string // the agent's name
	// Client names the calling client in "answered by" notes.
	Client string
}

// speakersOf names a conversation's speakers.
func speakersOf(principal string, clients []agent.Client, ag agent.Agent, found bool) speakers {
	s := speakers{User: "You", Agent: "The agent", Client: "the calling client"}
	if principal != agent.LocalPrincipal {
		s.User = clientName(principal, clients)
		s.Client = s.User
	}
	if found {
		s.Agent = cmp.Or(strings.TrimSpace(ag.Name), ag.Slug)
	}
	return s
}

// itemKind says how a transcript item is drawn.
type itemKind int

const (
	itemMessage  itemKind = iota // someone's words
	itemCall                     // a tool call: a one-liner, its result when opened
	itemQuestion                 // a question the agent asked, and its answer
)

// transcriptItem is one line (or block) of a transcript.
type transcriptItem struct {
	Kind itemKind
	Who  string // itemMessage and itemQuestion: who speaks
	Text string // the words; for a call, its one-liner
	// Result is a call's result ("" while it runs); for a question, what
	// became of it (answered by whom, declined, expired).
	Result string
	Failed bool // a tool that failed, a question nobody answered
	// Call is a call's full arguments, one per line, shown when opened.
	Call string
}

// transcriptTurn is one turn as shown: its items and a line of outcome.
type transcriptTurn struct {
	ID      string
	Items   []transcriptItem
	Summary string
	Failed  bool // failed, stopped or interrupted: shown in the error colour
}

// transcriptItems turns a turn's messages into items: each call matched with its
// result, ask_user calls and approvals with the stored question (qs, the
// turn's) that says who answered.
func transcriptItems(msgs []agent.Message, qs []agent.Question, sp speakers) []transcriptItem {
	results := make(map[string]agent.Message)
	for _, m := range msgs {
		if m.Role == agent.RoleTool {
			results[m.ToolCallID] = m
		}
	}
	used := make([]bool, len(qs))
	// question finds the turn's next question of the kind (and tool).
	question := func(kind agent.QuestionKind, tool string) (agent.Question, bool) {
		for i, q := range qs {
			if !used[i] && q.Kind == kind && (kind != agent.KindApproval || q.Tool == tool) {
				used[i] = true
				return q, true
			}
		}
		return agent.Question{}, false
	}
	var out []transcriptItem
	for _, m := range msgs {
		switch m.Role {
		case agent.RoleUser:
			out = append(out, transcriptItem{Kind: itemMessage, Who: sp.User, Text: m.Content})
		case agent.RoleAssistant:
			if strings.TrimSpace(m.Content) != "" {
				out = append(out, transcriptItem{Kind: itemMessage, Who: sp.Agent, Text: m.Content})
			}
			for _, c := range m.ToolCalls {
				res, done := results[c.ID]
				if c.Name == "ask_user" {
					it := transcriptItem{Kind: itemQuestion, Who: sp.Agent, Text: askedText(c.Arguments)}
					if q, ok := question(agent.KindQuestion, ""); ok {
						it.Result, it.Failed = answerNote(q, sp)
					} else if done {
						it.Result = "The answer: " + res.Content
					}
					out = append(out, it)
					continue
				}
				it := transcriptItem{Kind: itemCall, Text: callLine(c), Call: callArgs(c)}
				if q, ok := question(agent.KindApproval, c.Name); ok {
					// Who let it run goes first: a long line is cut at its end.
					note, _ := answerNote(q, sp)
					named := c
					named.Name += " (" + note + ")"
					it.Text = callLine(named)
				}
				if done {
					it.Result = res.Content
					it.Failed = strings.HasPrefix(res.Content, "error:")
				}
				out = append(out, it)
			}
		}
	}
	return out
}

// askedText is the question of an ask_user call.
func askedText(args json.RawMessage) string {
	var in struct {
		Question string   `json:"question"`
		Choices  []string `json:"choices"`
	}
	if json.Unmarshal(args, &in) != nil || in.Question == "" {
		return "asked a question"
	}
	if len(in.Choices) > 0 {
		return in.Question + " (" + strings.Join(in.Choices, " / ") + ")"
	}
	return in.Question
}

// answerNote says what became of a question, and who answered it; true
// when nobody did.
func answerNote(q agent.Question, sp speakers) (string, bool) {
	by := "you, in Deskhand"
	if q.Answer != nil && q.Answer.By == agent.ByClient {
		by = sp.Client
	}
	if q.Answer != nil && q.Answer.By == agent.ByRule {
		by = "your \"always allow\" rule, without asking"
	}
	switch q.Status {
	case agent.QuestionPending:
		return "waiting for an answer", false
	case agent.QuestionExpired:
		return "nobody answered in time", true
	case agent.QuestionCancelled:
		return "withdrawn: the turn ended first", true
	case agent.QuestionDeclined:
		return "declined by " + by, true
	}
	if q.Answer == nil {
		return string(q.Status), false
	}
	if q.Kind == agent.KindApproval {
		verb := "approved"
		if !q.Answer.Approve {
			verb = "denied"
		}
		return noteWithComment(verb+" by "+by, q.Answer.Comment), !q.Answer.Approve
	}
	return "answered by " + by + ": " + q.Answer.Text, false
}

func noteWithComment(s, comment string) string {
	if strings.TrimSpace(comment) == "" {
		return s
	}
	return s + ": “" + strings.TrimSpace(comment) + "”"
}

// callLineMax bounds a tool call's one-liner, so that a long argument
// does not widen the window.
const callLineMax = 72

// callLine is a tool call in a line: "read_file · path: notes.txt".
func callLine(c agent.ToolCall) string {
	var args map[string]any
	if json.Unmarshal(c.Arguments, &args) != nil || len(args) == 0 {
		return c.Name
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v, ok := args[k].(string)
		if !ok {
			raw, _ := json.Marshal(args[k])
			v = string(raw)
		}
		v, _, _ = strings.Cut(v, "\n")
		parts = append(parts, k+": "+v)
	}
	return transcriptClip(c.Name+" · "+strings.Join(parts, ", "), callLineMax)
}

// callArgs are a call's arguments in full, one per line.
func callArgs(c agent.ToolCall) string {
	var args map[string]any
	if json.Unmarshal(c.Arguments, &args) != nil {
		return string(c.Arguments)
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		v, ok := args[k].(string)
		if !ok {
			raw, _ := json.Marshal(args[k])
			v = string(raw)
		}
		fmt.Fprintf(&b, "%s: %s\n", k, v)
	}
	return strings.TrimRight(b.String(), "\n")
}

// transcriptClip cuts text to max runes, ending it with an ellipsis.
func transcriptClip(text string, max int) string {
	if utf8.RuneCountInString(text) <= max {
		return text
	}
	return string([]rune(text)[:max-1]) + "…"
}

// turnViews are a conversation's stored turns as shown, all but skip
// (the running turn, shown live).
func turnViews(msgs []agent.Message, turns []agent.Turn, qs []agent.Question, sp speakers, skip string) []transcriptTurn {
	var out []transcriptTurn
	for _, t := range turns {
		if t.ID == skip {
			continue
		}
		out = append(out, transcriptTurn{ID: t.ID, Items: transcriptItems(turnMessages(msgs, t.ID), turnQuestions(qs, t.ID), sp),
			Summary: turnSummary(t), Failed: turnFailed(t.Status)})
	}
	return out
}

func turnFailed(s agent.TurnStatus) bool {
	return s == agent.TurnFailed || s == agent.TurnCancelled || s == agent.TurnInterrupted
}

func turnMessages(msgs []agent.Message, turnID string) []agent.Message {
	var out []agent.Message
	for _, m := range msgs {
		if m.TurnID == turnID {
			out = append(out, m)
		}
	}
	return out
}

func turnQuestions(qs []agent.Question, turnID string) []agent.Question {
	var out []agent.Question
	for _, q := range qs {
		if q.TurnID == turnID {
			out = append(out, q)
		}
	}
	return out
}

// liveView is the running turn as shown: the user's message (stored, or
// from the turn's start) and the rounds done; what the model writes now
// is shown apart (liveSummary), as it changes with every piece.
func liveView(lt agent.LiveTurn, stored []agent.Message, asked string, sp speakers) transcriptTurn {
	msgs := turnMessages(stored, lt.TurnID)
	if len(msgs) == 0 && asked != "" {
		msgs = []agent.Message{{Role: agent.RoleUser, Content: asked, TurnID: lt.TurnID}}
	}
	return transcriptTurn{ID: lt.TurnID, Items: transcriptItems(append(msgs, lt.Messages...), nil, sp)}
}

// liveSummary is the running turn's line: what it does now and about how
// many tokens the model wrote so far.
func liveSummary(lt agent.LiveTurn) string {
	s := "Running · "
	switch calling := runningCall(lt.Messages); {
	case lt.Chunks > 0:
		s += "writing…"
	case calling != "":
		s += "running " + calling + "…"
	default:
		s += "waiting for the model…"
	}
	if n := lt.OutputTokens + lt.Chunks; n > 0 {
		s += " ≈" + countOf(n, "token") + " so far"
	}
	return s
}

// runningCall is the tool called last and not answered yet, if any.
func runningCall(msgs []agent.Message) string {
	answered := make(map[string]bool)
	for _, m := range msgs {
		if m.Role == agent.RoleTool {
			answered[m.ToolCallID] = true
		}
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, c := range msgs[i].ToolCalls {
			if !answered[c.ID] {
				return c.Name
			}
		}
	}
	return ""
}

// waitingLine says that an agent waits for an answer in this
// conversation, and who is asked.
func waitingLine(q agent.Question, ag agent.Agent, found bool) (title, who string) {
	what := strings.TrimSpace(q.Text)
	if q.Kind == agent.KindApproval {
		what = "may it run " + callLine(agent.ToolCall{Name: q.Tool, Arguments: q.Arguments}) + "?"
	}
	name := q.Agent
	if found {
		name = agentShownName(ag)
	}
	title = name + " is waiting for an answer: " + what
	if !found {
		return title, "Answer it here, or from the Questions tab."
	}
	return title, whoIsAsked(ag.Routing, ag.ClientMayApprove)
}

// rowOf is the row showing the conversation id, or -1 when none does
// (it is filtered out, or nothing is open): the list's selection follows
// the conversation, never a row number.
func rowOf(shown []agent.ConversationSummary, id string) int {
	if id == "" {
		return -1
	}
	for i, c := range shown {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// transcriptText is a transcript as plain text, for the clipboard.
func transcriptText(turns []transcriptTurn) string {
	var b strings.Builder
	for i, t := range turns {
		if i > 0 {
			b.WriteString("\n")
		}
		for _, it := range t.Items {
			switch it.Kind {
			case itemMessage:
				fmt.Fprintf(&b, "%s: %s\n", it.Who, it.Text)
			case itemQuestion:
				fmt.Fprintf(&b, "%s asked: %s\n", it.Who, it.Text)
				if it.Result != "" {
					fmt.Fprintf(&b, "  %s\n", it.Result)
				}
			case itemCall:
				fmt.Fprintf(&b, "[%s]\n", it.Text)
				if it.Result != "" {
					fmt.Fprintf(&b, "  → %s\n", transcriptClip(strings.ReplaceAll(it.Result, "\n", " "), 200))
				}
			}
		}
		if t.Summary != "" {
			b.WriteString("— " + t.Summary + "\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
