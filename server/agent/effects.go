package agent

// Effects says what a tool can do besides answering: the bits it can
// reach of the world. An agent's effects are those of every tool it can
// reach (built-in tools, tool servers' tools, other agents); its MCP
// annotations are derived from them (DeriveHints).
type Effects uint8

const (
	// EffectReads: it reads what is on this computer (files, folders).
	// Reading changes nothing.
	EffectReads Effects = 1 << iota
	// EffectWrites: it can change or delete what is there (write_file):
	// destructive.
	EffectWrites
	// EffectFetches: it reaches the open world, the network (fetch_url).
	EffectFetches
	// EffectSends: it sends something out or changes something elsewhere
	// without being known to destroy anything: a side effect, though not
	// a destructive one. fetch_url has it: the address it asks for leaves
	// the computer (it can carry what read_file read) and a GET can
	// trigger anything on the other side.
	EffectSends
)

// EffectsUnknown is what a tool that does not say counts as: everything.
const EffectsUnknown = EffectReads | EffectWrites | EffectFetches | EffectSends

// SideEffects reports whether the effects change anything: writes or
// sends. Reading and reaching the network to read are not side effects
// by themselves (a read-only tool server tool may be open-world).
func (e Effects) SideEffects() bool { return e&(EffectWrites|EffectSends) != 0 }

// EffectsDescriber is implemented by tools that say what they can do.
// A tool that does not is taken to do anything (EffectsUnknown).
type EffectsDescriber interface {
	Effects() Effects
}

// EffectsOf returns what a tool says it can do, EffectsUnknown when it
// does not say.
func EffectsOf(t Tool) Effects {
	if d, ok := t.(EffectsDescriber); ok {
		return d.Effects()
	}
	return EffectsUnknown
}

// EffectsFromHints turns a foreign tool's MCP annotations (a tool
// server's) into effects, with the spec's defaults for hints it leaves
// out (nil): not read-only, destructive, open-world. So a tool counts as
// side-effecting unless its own annotations say it is read-only.
func EffectsFromHints(readOnly, destructive, openWorld *bool) Effects {
	var e Effects
	switch {
	case readOnly != nil && *readOnly:
		e = EffectReads
	case destructive != nil && !*destructive:
		e = EffectReads | EffectSends // additive: a side effect, not a destructive one
	default:
		e = EffectReads | EffectWrites | EffectSends
	}
	if openWorld == nil || *openWorld {
		e |= EffectFetches
	}
	return e
}

// ToolHints are the MCP tool annotations of an agent's tool.
type ToolHints struct {
	ReadOnly    bool // nothing it can reach has a side effect
	Destructive bool // something it can reach can write
	Idempotent  bool // never, for an agent: each call is a new turn
	OpenWorld   bool // something it can reach fetches
}

// DeriveHints derives an agent's annotations from the effects of every
// tool it can reach (another agent counts with its own effects, which are
// the union of its tools'). An agent with no tools is read-only and
// closed-world; a call is never idempotent (it starts or continues a
// conversation, and a model's answer varies).
func DeriveHints(effects ...Effects) ToolHints {
	all := UnionEffects(effects...)
	return ToolHints{
		ReadOnly:    !all.SideEffects(),
		Destructive: all&EffectWrites != 0,
		Idempotent:  false,
		OpenWorld:   all&EffectFetches != 0,
	}
}

// UnionEffects is everything any of the effects can do: what an agent
// that reaches tools with these effects can do, as another agent's tool.
func UnionEffects(effects ...Effects) Effects {
	var all Effects
	for _, e := range effects {
		all |= e
	}
	return all
}

// Effects is what the agent can do through the tools it can reach:
// the built-in tools it has switched on (ask_user, which every agent has,
// only asks the person and changes nothing). A tool it names that is not
// in the catalog cannot run, so it adds nothing.
func (ags *Agents) Effects(a Agent) Effects {
	c := ags.c
	var effects []Effects
	for _, at := range a.Tools {
		if t, ok := c.tools[at.Name]; ok {
			effects = append(effects, EffectsOf(t))
		}
	}
	effects = append(effects, c.toolServerEffects(a)) // toolservers_core.go
	effects = append(effects, c.teamEffects(a))       // team.go
	return UnionEffects(effects...)
}

// Hints are the MCP annotations of the agent's tool (DeriveHints of
// Agents.Effects).
func (ags *Agents) Hints(a Agent) ToolHints {
	return DeriveHints(ags.Effects(a))
}
