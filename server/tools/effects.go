package tools

import "github.com/deskhand/deskhand/server/agent"

// What each built-in tool can do (agent.Effects), from which agents' MCP
// annotations are derived: reading files changes nothing, write_file
// writes (destructive), fetch_url reaches the network and sends the
// address it asks for out (a side effect), current_time only reads the
// clock.

func (currentTime) Effects() agent.Effects { return 0 }
func (readFile) Effects() agent.Effects    { return agent.EffectReads }
func (listDir) Effects() agent.Effects     { return agent.EffectReads }
func (writeFile) Effects() agent.Effects   { return agent.EffectWrites }
func (fetchURL) Effects() agent.Effects    { return agent.EffectFetches | agent.EffectSends }
