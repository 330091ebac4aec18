package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// QuestionKind says what a person is asked.
type QuestionKind string

const (
	// KindQuestion asks for free text, or a choice among Choices.
	KindQuestion QuestionKind = "question"
	// KindApproval asks whether a tool call may run.
	KindApproval QuestionKind = "approval"
)

// QuestionStatus is where a question is in its life.
type QuestionStatus string

const (
	QuestionPending   QuestionStatus = "pending"
	QuestionAnswered  QuestionStatus = "answered"
	QuestionDeclined  QuestionStatus = "declined"  // the person (or their client) declined or cancelled
	QuestionExpired   QuestionStatus = "expired"   // nobody answered in time, or the process stopped
	QuestionCancelled QuestionStatus = "cancelled" // the turn ended before an answer
)

// Answerer says who answered.
type Answerer string

const (
	ByClient  Answerer = "client"  // the calling client's user, by elicitation
	ByDesktop Answerer = "desktop" // the popup, or the command line when headless
)

// Routing says who an agent's questions go to.
type Routing string

const (
	// RouteClient asks the calling client's user when the client can
	// answer, and shows the question on the desktop too: first answer wins.
	RouteClient Routing = "client"
	// RouteDesktop asks on the desktop only.
	RouteDesktop Routing = "desktop"
	// RouteDecline asks nobody: a turn that needs a person fails.
	RouteDecline Routing = "decline"
)

// DefaultQuestionTimeout is how long a question waits when the agent does
// not say.
const DefaultQuestionTimeout = 10 * time.Minute

// Question is something an agent's turn needs a person for.
type Question struct {
	ID             string
	Kind           QuestionKind
	Agent          string // slug
	ConversationID string
	TurnID         string
	Principal      string
	Seq            int // 1 for the turn's first question, then 2, …
	Text           string
	Choices        []string        // KindQuestion: the offered answers, or none for free text
	Tool           string          // KindApproval: the tool to run
	Arguments      json.RawMessage // KindApproval: its arguments
	AskedAt        time.Time
	ExpiresAt      time.Time
	Status         QuestionStatus
	Answer         *Answer // once answered or declined
	// Scope is where an approval's decoded arguments reach (the file's
	// path, the URL's host), for "always allow" here; not stored.
	Scope ApprovalScope
	// ClientAsked tells that the calling client was asked too, beside the
	// desktop; not stored.
	ClientAsked bool
}

// Answer is a person's reply.
type Answer struct {
	Declined bool   // the person declined (or cancelled); nothing else is set
	Text     string // KindQuestion
	Approve  bool   // KindApproval
	Comment  string // KindApproval, optional
	By       Answerer
	At       time.Time
	// Remember is an approval's "always allow": the rule to add; nil for
	// once. A denial is never remembered.
	Remember *RuleRequest
	// Rule is the ID of the approval rule that approved (By is ByRule).
	Rule string
}

// Schema is the form every asker shows (elicitation, InputRequiredResult,
// Tasks, popup, command line): one field "answer" (a string, or an enum of
// the choices) for a question; {approve, comment?, remember?} for an
// approval, where remember (optional, default "once") asks for an
// approval rule.
func (q Question) Schema() map[string]any {
	if q.Kind == KindApproval {
		return map[string]any{
			"type": "object",
			"properties": map[string]any{
				"approve":  map[string]any{"type": "boolean", "title": "Approve", "description": "Let the agent run " + q.Tool + "?"},
				"comment":  map[string]any{"type": "string", "title": "Comment", "description": "Optional: a note for the agent"},
				"remember": q.rememberField(),
			},
			"required": []string{"approve"},
		}
	}
	field := map[string]any{"type": "string", "title": "Answer"}
	if len(q.Choices) > 0 {
		field["enum"] = slices.Clone(q.Choices)
	}
	return map[string]any{"type": "object", "properties": map[string]any{"answer": field}, "required": []string{"answer"}}
}

// Prompt is the message shown with the form.
func (q Question) Prompt() string {
	if q.Kind == KindApproval {
		if q.Text != "" { // a tool server's tool: the server, the tool and the arguments
			return q.Text
		}
		return fmt.Sprintf("The agent %q wants to run %s with %s. Allow it?", q.Agent, q.Tool, string(q.Arguments))
	}
	return q.Text
}

// ParseAnswer checks form content against the question's schema: content
// that does not fit is refused, so no answer is ever invented or bent.
func (q Question) ParseAnswer(content map[string]any, by Answerer) (Answer, error) {
	a := Answer{By: by}
	if q.Kind == KindApproval {
		return q.parseApproval(content, by)
	}
	for k := range content {
		if k != "answer" {
			return Answer{}, Userf(nil, "unexpected field %q: the form has one field, 'answer'", k)
		}
	}
	text, ok := content["answer"].(string)
	if !ok {
		return Answer{}, Userf(nil, "'answer' must be text")
	}
	if len(q.Choices) > 0 && !slices.Contains(q.Choices, text) {
		return Answer{}, Userf(nil, "%q is not one of the offered choices: %s", text, strings.Join(q.Choices, ", "))
	}
	if strings.TrimSpace(text) == "" {
		return Answer{}, Userf(nil, "the answer is empty; decline instead if you do not want to answer")
	}
	a.Text = text
	return a, nil
}

// ForModel is how the answer reads to the model, as the tool's result.
func (a Answer) ForModel(q Question) string {
	switch {
	case a.Declined:
		return "The person declined to answer."
	case q.Kind == KindApproval && a.Approve:
		return withComment("The person approved.", a.Comment)
	case q.Kind == KindApproval:
		return withComment("The person denied this call; it was not run.", a.Comment)
	}
	return a.Text
}

func withComment(s, comment string) string {
	if strings.TrimSpace(comment) == "" {
		return s
	}
	return s + " Their comment: " + comment
}
