package agent

import (
	"errors"
	"fmt"
)

// UserError carries a message fit to show a person (in the GUI or as an
// MCP tool error) apart from the detail that is only logged.
type UserError struct {
	Msg string // what went wrong and what to do, for people
	Err error  // detail for the log; may be nil
}

func (e *UserError) Error() string {
	if e.Err == nil {
		return e.Msg
	}
	return e.Msg + ": " + e.Err.Error()
}

func (e *UserError) Unwrap() error { return e.Err }

// Userf returns a *UserError with a formatted message and a logged cause.
func Userf(cause error, format string, args ...any) *UserError {
	return &UserError{Msg: fmt.Sprintf(format, args...), Err: cause}
}

// UserMessage returns the text a person may see for err: the message of
// the outermost *UserError, or a generic line for anything else (whose
// detail belongs in the log only).
func UserMessage(err error) string {
	if err == nil {
		return ""
	}
	var ue *UserError
	if errors.As(err, &ue) {
		return ue.Msg
	}
	return "internal error in Deskhand; the log has the details"
}

// Errors callers branch on.
var (
	// ErrNotFound is returned by ports for a missing row or secret.
	ErrNotFound = errors.New("not found")
	// ErrSlugTaken: another agent already has the slug.
	ErrSlugTaken = &UserError{Msg: "another agent already uses this slug; choose another"}
	// ErrUnknownConversation is the same for a handle that was never minted
	// and for one that belongs to another client, so handles cannot be probed.
	ErrUnknownConversation = &UserError{Msg: "unknown conversation handle: no conversation with this handle exists for you. Call again without 'conversation' to start a new one."}
	// ErrConversationBusy: a turn is already running in the conversation.
	ErrConversationBusy = &UserError{Msg: "this conversation is busy with another call; wait for it to finish, or start a new conversation"}
	// ErrConversationsOff: the agent does not keep conversations.
	ErrConversationsOff = &UserError{Msg: "this agent does not keep conversations: call it without 'conversation'"}
	// ErrNoModel: the agent has no model to run on (its words name the
	// command line; a window says where to pick one instead).
	ErrNoModel = errors.New("the agent has no model")
	// ErrShutdown ends turns that were running when Deskhand stopped.
	ErrShutdown = errors.New("deskhand is shutting down")
)
