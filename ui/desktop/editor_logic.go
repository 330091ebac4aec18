package desktop

import (
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
)

// maxSlugLen is the longest slug agent.CheckSlug accepts.
const maxSlugLen = 64

// slugFromName derives a tool name from an agent's name: lower case,
// anything else than a letter, a digit, '-' or '_' becomes '-', runs of
// '-' become one, and it starts and ends with a letter or a digit. ""
// when nothing is left (a name with no Latin letter or digit).
func slugFromName(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.Trim(b.String(), "-_")
	if len(s) > maxSlugLen {
		s = strings.TrimRight(s[:maxSlugLen], "-_")
	}
	return s
}

// fieldsChanged says whether the editor's values differ from those of the
// agent shown, as saving would see them: lists compare item by item
// (blank lines aside), the schema without surrounding spaces.
func fieldsChanged(shown, now editorFields) bool {
	return shown.Name != now.Name || shown.Slug != now.Slug || shown.Description != now.Description ||
		shown.Prompt != now.Prompt || strings.TrimSpace(shown.Model) != strings.TrimSpace(now.Model) ||
		strings.TrimSpace(shown.Schema) != strings.TrimSpace(now.Schema) ||
		shown.Backend != now.Backend || shown.Provider != now.Provider || shown.Routing != now.Routing ||
		shown.Conversations != now.Conversations || shown.Enabled != now.Enabled ||
		shown.ClientMayApprove != now.ClientMayApprove || shown.LogArguments != now.LogArguments ||
		strings.TrimSpace(shown.Icon) != strings.TrimSpace(now.Icon) ||
		!slices.Equal(shown.Tools, now.Tools) ||
		!slices.Equal(lines(shown.Folders), lines(now.Folders)) ||
		!slices.Equal(lines(shown.ReachableHosts), lines(now.ReachableHosts)) ||
		!slices.Equal(lines(shown.Starters), lines(now.Starters)) ||
		!slices.Equal(shown.Team, now.Team)
}

// The routing choices in words that say who is asked; the values stored
// stay agent.RouteClient, RouteDesktop and RouteDecline.
var routingWords = []struct {
	routing agent.Routing
	words   string
}{
	{agent.RouteClient, "you and the calling client: the first answer counts"},
	{agent.RouteDesktop, "only you, on this computer"},
	{agent.RouteDecline, "nobody: the turn fails"},
}

// routingChoices are the words the routing select offers.
func routingChoices() []string {
	out := make([]string, len(routingWords))
	for i, w := range routingWords {
		out[i] = w.words
	}
	return out
}

// routingWord is how a routing reads in the editor; "" reads as
// agent.RouteClient, the core's default.
func routingWord(r agent.Routing) string {
	for _, w := range routingWords {
		if w.routing == r {
			return w.words
		}
	}
	return routingWords[0].words
}

// routingOf is the routing the editor's words stand for.
func routingOf(words string) agent.Routing {
	for _, w := range routingWords {
		if w.words == words {
			return w.routing
		}
	}
	return agent.RouteClient
}

// noModelWarning is what the editor says of an agent on a provider
// without a model; "" when it has one or runs on the client's model.
func noModelWarning(f editorFields) string {
	if f.Backend == agent.BackendProvider && strings.TrimSpace(f.Model) == "" {
		return "No model picked: clients calling this agent get an error until you pick one."
	}
	return ""
}

// foldersProblem checks the allowed folders as they are typed: each a
// full path, such as /home/ada/notes.
func foldersProblem(text string) string {
	for _, f := range lines(text) {
		if !filepath.IsAbs(f) && !strings.HasPrefix(f, "~") {
			return fmt.Sprintf("%q is not a full path: write each folder from the top, such as %s", f, filepath.Join(string(filepath.Separator)+"home", "ada", "notes"))
		}
	}
	return ""
}

// hostsProblem checks the hosts on the person's network as they are
// typed, as the core does on save.
func hostsProblem(text string) string {
	for _, e := range lines(text) {
		host, port, err := net.SplitHostPort(e)
		n, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || n < 1 || n > 65535 || strings.ContainsAny(host, "/@ ") {
			return fmt.Sprintf("%q is not a host and port: write one per line as host:port, such as nas.local:8080", e)
		}
	}
	return ""
}

// editorHeading heads the editor: which agent, and whether it has
// changes not saved yet.
func editorHeading(a agent.Agent, changed bool) string {
	title := "New agent"
	if a.ID != "" {
		title = agentLabel(a)
	}
	if changed {
		return title + " — unsaved changes"
	}
	return title
}

// maxTryExchanges bounds the "Try it" transcript kept for each agent.
const maxTryExchanges = 10

// tryExchange is one message sent with "Try it", and its answer so far.
type tryExchange struct {
	Message, Answer string
	Done            bool
}

// tryTranscripts keeps the last "Try it" exchanges of each agent, by its
// ID, in memory.
type tryTranscripts map[string][]tryExchange

// start adds a message to an agent's transcript, dropping the oldest
// exchange beyond maxTryExchanges.
func (t tryTranscripts) start(id, msg string) {
	log := append(t[id], tryExchange{Message: msg})
	if len(log) > maxTryExchanges {
		log = slices.Clone(log[len(log)-maxTryExchanges:])
	}
	t[id] = log
}

// stream adds text to the answer of the agent's last exchange.
func (t tryTranscripts) stream(id, text string) {
	if log := t[id]; len(log) > 0 && !log[len(log)-1].Done {
		log[len(log)-1].Answer += text
	}
}

// finish sets the answer of the agent's last exchange.
func (t tryTranscripts) finish(id, answer string) {
	if log := t[id]; len(log) > 0 {
		log[len(log)-1].Answer, log[len(log)-1].Done = answer, true
	}
}

// text is an agent's transcript as read in the editor.
func (t tryTranscripts) text(id, who string) string {
	var b strings.Builder
	for i, x := range t[id] {
		if i > 0 {
			b.WriteString("\n\n")
		}
		answer := x.Answer
		if answer == "" && !x.Done {
			answer = "…"
		}
		fmt.Fprintf(&b, "You: %s\n%s: %s", x.Message, who, answer)
	}
	return b.String()
}
