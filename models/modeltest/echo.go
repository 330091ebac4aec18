package modeltest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// AskPrefix starts a user message that makes the memory echo ask the
// person.
const AskPrefix = "ask: "

// Turn is a message of a request as the memory echo reads it.
type Turn struct {
	User    bool     // said by the user
	Text    string   // its text
	Results []string // the tool results it carries
}

// Echo is the fakes' default answer ("memory echo") to a conversation:
// "I remember: " and the text of every user message joined with " | ",
// so that a test sees whether the history reached the model. After tool
// results it answers "You answered: " and the results; for a last user
// message starting with [AskPrefix] it calls ask_user with the rest as
// the question, the call's ID ending in "ask" and four digits.
func Echo(turns []Turn) (text string, ask *ToolCall) {
	if n := len(turns); n > 0 {
		last := turns[n-1]
		if len(last.Results) > 0 {
			return "You answered: " + strings.Join(last.Results, " | "), nil
		}
		if q, ok := strings.CutPrefix(last.Text, AskPrefix); ok && last.User {
			args, _ := json.Marshal(map[string]string{"question": q})
			return "", &ToolCall{ID: fmt.Sprintf("ask%04d", n%10000), Name: "ask_user", Arguments: string(args)}
		}
	}
	var said []string
	for _, t := range turns {
		if t.User && t.Text != "" {
			said = append(said, t.Text)
		}
	}
	return "I remember: " + strings.Join(said, " | "), nil
}
