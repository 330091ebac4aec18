package control

import "github.com/deskhand/deskhand/server/agent"

// RuleInfo is an approval rule as lists show it: with its agent's slug
// and its client's name ("" when the rule is for every client).
type RuleInfo struct {
	agent.ApprovalRule
	AgentSlug  string `json:"agentSlug"`
	ClientName string `json:"clientName,omitempty"`
}

// RuleInfos names each rule's agent and client. A client that is gone
// keeps its ID as its name; a principal that is not a token client (the
// stdio bridge's "local") is named as it is.
func RuleInfos(rules []agent.ApprovalRule, agents []agent.Agent, clients []agent.Client) []RuleInfo {
	slugs := make(map[string]string, len(agents))
	for _, a := range agents {
		slugs[a.ID] = a.Slug
	}
	names := make(map[string]string, len(clients))
	for _, c := range clients {
		names[c.ID] = c.Name
	}
	out := make([]RuleInfo, 0, len(rules))
	for _, r := range rules {
		info := RuleInfo{ApprovalRule: r, AgentSlug: slugs[r.Agent], ClientName: r.Client}
		if n, ok := names[r.Client]; ok {
			info.ClientName = n
		}
		out = append(out, info)
	}
	return out
}
