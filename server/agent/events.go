package agent

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// EventKind says what an Event reports. Every kind is declared here.
type EventKind string

const (
	EventAgentsChanged  EventKind = "agents_changed"  // an agent was created, edited, enabled or disabled
	EventClientsChanged EventKind = "clients_changed" // a client token was created or revoked
	// EventProvidersChanged: a provider was added, changed or removed
	// (Text = its name).
	EventProvidersChanged EventKind = "providers_changed"
	EventTurnStarted      EventKind = "turn_started"
	EventModelCall        EventKind = "model_call" // a model round begins (Text = the model)
	EventDelta            EventKind = "delta"      // streamed model text (Text)
	EventToolCall         EventKind = "tool_call"  // the model called a tool (Text = tool name)
	EventTurnEnded        EventKind = "turn_ended"
	// EventQuestionAsked: a question waits for a person (Question = its ID, Text = the prompt).
	EventQuestionAsked EventKind = "question_asked"
	// EventQuestionClosed: answered, declined, expired or cancelled (Text = the status).
	EventQuestionClosed EventKind = "question_closed"
	// EventClientAgentsChanged says which agents one client sees changed;
	// its Text is the client's ID (the principal), so that only that
	// client's sessions hear list_changed.
	EventClientAgentsChanged EventKind = "client_agents_changed"
	// EventApprovalRulesChanged: an approval rule was added or revoked.
	EventApprovalRulesChanged EventKind = "approval_rules_changed"
	// EventMemberProgress reports a team member's progress on the turn
	// that called it: Agent, Conversation and Turn are the caller's, Text
	// says what the member does ("researcher: calling the tool
	// read_file"). A member's member's progress reaches every turn up the
	// chain the same way.
	EventMemberProgress EventKind = "member_progress"
	// EventToolHeld: a tool server's tool was held because its definition
	// changed since the person attached it (Agent = the agent, Text = the
	// model-facing name). ToolServers.Held lists them with both
	// definitions.
	EventToolHeld EventKind = "tool_held"
	// EventActivity: a row was recorded (Activity = the row).
	EventActivity EventKind = "activity"
	// EventToolServersChanged: a tool server was added or changed (Text =
	// its name); one removed changes agents too (EventAgentsChanged).
	EventToolServersChanged EventKind = "tool_servers_changed"
)

// Event is something the desktop (or the MCP surface) may want to show.
type Event struct {
	Kind         EventKind
	Time         time.Time
	Agent        string // slug
	Conversation string
	Turn         string
	Text         string
	Status       TurnStatus   // for EventTurnEnded
	Question     string       // question ID, for question events
	By           Answerer     // who answered, for EventQuestionClosed
	ClientAsked  bool         // for question events: the calling client was asked too
	Activity     *ActivityRow // for EventActivity
}

// subscriberBuffer bounds each subscriber; a full one loses events rather
// than stalling the run loop.
const subscriberBuffer = 256

// Events are what the core tells its subscribers (the desktop, the MCP
// surface, the control channel's followers).
type Events struct{ hub }

type hub struct {
	mu      sync.Mutex
	subs    map[chan Event]subscription
	dropped atomic.Uint64
}

// subscription is what a subscriber wants: the kinds (nil: all), and of
// those the events keep accepts (nil: all).
type subscription struct {
	kinds []EventKind
	keep  func(Event) bool
}

// Subscribe returns a channel of events that closes when ctx ends: the
// events of the kinds given, or all of them when none is. Delivery never
// blocks the publisher: a subscriber that falls more than a buffer behind
// misses events (Dropped counts them) and should re-read state. Naming the
// kinds keeps a subscriber's buffer (and wake-ups) for what it reads: a
// turn's deltas cannot crowd out an agent change.
func (ev *Events) Subscribe(ctx context.Context, kinds ...EventKind) <-chan Event {
	return ev.SubscribeWhere(ctx, nil, kinds...)
}

// SubscribeWhere is Subscribe for the events keep accepts: a desktop
// showing one conversation's streamed text is not woken for each piece of
// every other call's, thousands a second under load. keep runs on the
// publisher's goroutine with the subscribers locked: it must be quick,
// and must not call the Core.
func (ev *Events) SubscribeWhere(ctx context.Context, keep func(Event) bool, kinds ...EventKind) <-chan Event {
	ch := make(chan Event, subscriberBuffer)
	ev.mu.Lock()
	if ev.subs == nil {
		ev.subs = make(map[chan Event]subscription)
	}
	ev.subs[ch] = subscription{kinds: kinds, keep: keep}
	ev.mu.Unlock()
	context.AfterFunc(ctx, func() {
		ev.mu.Lock()
		delete(ev.subs, ch)
		close(ch)
		ev.mu.Unlock()
	})
	return ch
}

// Dropped is how many events slow subscribers missed.
func (ev *Events) Dropped() uint64 {
	return ev.dropped.Load()
}

func (c *Core) publish(e Event) {
	if e.Time.IsZero() {
		e.Time = c.now()
	}
	c.events.mu.Lock()
	defer c.events.mu.Unlock()
	for ch, sub := range c.events.subs {
		if sub.kinds != nil && !slices.Contains(sub.kinds, e.Kind) || sub.keep != nil && !sub.keep(e) {
			continue
		}
		select {
		case ch <- e:
		default:
			c.events.dropped.Add(1)
		}
	}
}
