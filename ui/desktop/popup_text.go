package desktop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deskhand/deskhand/server/agent"
)

// What a question's popup and its row in the Questions tab say: plain
// functions, tested without a display.

// popupTitle is a popup's window title. It starts with "Deskhand" and
// names the agent, so that people (and scripts: xdotool search --name)
// can tell the popups apart.
func popupTitle(q agent.Question) string {
	return "Deskhand: " + questionTitle(q)
}

// clock is a time left as m:ss, or h:mm:ss from an hour up.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s < 0 {
		s = 0
	}
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// timeoutNote says what happens if nobody answers, with the time left:
// the broker then closes the question as expired and the agent's turn
// stops with an error, which is what the caller (the client) gets back.
func timeoutNote(q agent.Question, client string, now time.Time) string {
	left := q.ExpiresAt.Sub(now)
	if left <= 0 {
		return "Time is up: nobody answered, so " + q.Agent + " stops and " + client + " is told that nobody answered."
	}
	told := client + " is told"
	if client == clientName(agent.LocalPrincipal, nil) {
		told = "you are told" // a turn started here, with Try it
	}
	if q.Kind == agent.KindApproval {
		return fmt.Sprintf("If nobody answers within %s, %s is not run, %s stops, and %s that nobody answered.", clock(left), q.Tool, q.Agent, told)
	}
	return fmt.Sprintf("If nobody answers within %s, %s stops and %s that nobody answered.", clock(left), q.Agent, told)
}

// askedWho says who else may answer a question besides the person here,
// from the asking agent's settings (found is false when the agent is not
// known, e.g. deleted meanwhile).
func askedWho(q agent.Question, a agent.Agent, found bool, client string) string {
	local := q.Principal == agent.LocalPrincipal
	switch {
	case local:
		return "Only you are asked, here."
	case q.Kind == agent.KindApproval && found && !a.ClientMayApprove:
		return "Only you can approve this, here."
	case found && a.Routing == agent.RouteDesktop:
		return "Only you are asked, here."
	case !q.ClientAsked: // it did not say it can show questions
		return "Only you are asked, here: " + client + " cannot ask its user."
	}
	return client + " may ask its user too: the first answer counts."
}

// answerText is a typed answer as stored: no stray newline or space
// around it.
func answerText(typed string) string { return strings.TrimSpace(typed) }

// clip keeps the first n lines of s, each cut to width characters; a
// cut shows as "…".
func clip(s string, n, width int) string {
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n")), "\n")
	cut := len(lines) > n
	if cut {
		lines = lines[:n]
	}
	for i, l := range lines {
		if utf8.RuneCountInString(l) > width {
			r := []rune(l)
			lines[i] = string(r[:width-1]) + "…"
		}
	}
	if cut {
		lines[len(lines)-1] += " …"
	}
	return strings.Join(lines, "\n")
}

// lastExchange is what a popup shows of the conversation a question came
// from: the last message the agent was sent and the last text it wrote
// before the question, a few lines each, in their order. The turn that
// asks is recorded when it ends, so what the agent wrote in it before
// asking is not there yet; "" when there is nothing to show.
func lastExchange(msgs []agent.Message, asked time.Time, agentName, client string) string {
	var user, reply int = -1, -1
	for i, m := range msgs {
		if !asked.IsZero() && m.CreatedAt.After(asked) {
			break
		}
		switch {
		case m.Role == agent.RoleUser:
			user = i
		case m.Role == agent.RoleAssistant && strings.TrimSpace(m.Content) != "":
			reply = i
		}
	}
	var out []string
	for _, i := range slices.Sorted(slices.Values([]int{user, reply})) {
		if i < 0 {
			continue
		}
		who := agentName
		if msgs[i].Role == agent.RoleUser {
			who = client
		}
		out = append(out, who+": "+clip(msgs[i].Content, 3, 100))
	}
	return strings.Join(out, "\n")
}

// approvalAction is the exact action an approval is for, readable: the
// tool, then its arguments (a path, a web address, the start of the
// content with its size; other arguments as "key: value", long values
// cut).
func approvalAction(tool string, args json.RawMessage) string {
	lines := []string{"Tool: " + tool}
	if server, name, ok := strings.Cut(tool, "__"); ok {
		// A tool server's tool: built-in tools have no "__" in their names.
		lines = []string{"Tool: " + name + ", of your tool server " + server}
	}
	if len(bytes.TrimSpace(args)) == 0 {
		return strings.Join(append(lines, "No arguments."), "\n")
	}
	var fields map[string]any
	if err := json.Unmarshal(args, &fields); err != nil {
		return strings.Join(append(lines, "Arguments: "+clip(string(args), 3, 100)), "\n")
	}
	if len(fields) == 0 {
		return strings.Join(append(lines, "No arguments."), "\n")
	}
	known := []struct{ key, label string }{{"path", "File"}, {"url", "Web address"}}
	for _, k := range known {
		if v, ok := fields[k.key].(string); ok {
			lines = append(lines, k.label+": "+clip(v, 1, 200))
			delete(fields, k.key)
		}
	}
	content, hasContent := fields["content"].(string)
	if hasContent {
		delete(fields, "content")
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range fields {
			if !yield(k) {
				return
			}
		}
	}) {
		lines = append(lines, k+": "+clip(argValue(fields[k]), 1, 100))
	}
	if hasContent {
		lines = append(lines, contentPreview(content))
	}
	return strings.Join(lines, "\n")
}

// argValue is an argument's value as text: a string as is, anything
// else as compact JSON.
func argValue(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// contentPreview is the start of a text to be written, with its size
// when only part of it shows.
func contentPreview(s string) string {
	const show = 6
	n := strings.Count(strings.TrimRight(s, "\n"), "\n") + 1
	if s == "" {
		return "Content: (empty)"
	}
	head := clip(s, show, 100)
	if n <= show && !strings.Contains(head, "…") {
		return "Content:\n" + head
	}
	return fmt.Sprintf("Content (%s, %s), first lines:\n%s", countOf(n, "line"), byteSize(len(s)), head)
}

// byteSize is a size for people: bytes, KB or MB.
func byteSize(n int) string {
	switch {
	case n < 1024:
		return countOf(n, "byte")
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
}

// questionsWaiting sums up the questions waiting, for the window's
// Questions tab badge, the tray and the status bar: how many, and who is
// asking ("" when none). The shell shows it; the Questions tab lists
// each.
func questionsWaiting(qs []agent.Question) (n int, summary string) {
	if len(qs) == 0 {
		return 0, ""
	}
	var agents []string
	for _, q := range qs {
		if !slices.Contains(agents, q.Agent) {
			agents = append(agents, q.Agent)
		}
	}
	if len(qs) == 1 {
		if qs[0].Kind == agent.KindApproval {
			return 1, qs[0].Agent + " is waiting for your approval to run " + qs[0].Tool + "."
		}
		return 1, qs[0].Agent + " is waiting for your answer."
	}
	return len(qs), fmt.Sprintf("%s waiting, from %s.", countOf(len(qs), "question"), strings.Join(agents, ", "))
}

// keysHint says how a popup is answered from the keyboard.
func keysHint(q agent.Question) string {
	switch {
	case q.Kind == agent.KindApproval:
		return "Ctrl+Enter approves. Enter in the comment starts a new line."
	case len(q.Choices) == 1:
		return "Press 1 to choose."
	case len(q.Choices) > 0 && len(q.Choices) <= 9:
		return fmt.Sprintf("Press 1–%d to choose.", len(q.Choices))
	case len(q.Choices) > 0:
		return "Press 1–9 for the first nine choices."
	}
	return "Enter sends. Shift+Enter starts a new line."
}
