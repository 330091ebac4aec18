package control

import (
	"context"
	"net/http"
	"net/url"

	"github.com/deskhand/deskhand/server/agent"
)

// ClientAgents is which agents a client sees: all, or the ones listed.
type ClientAgents struct {
	All    bool     `json:"all"`
	Agents []string `json:"agents,omitempty"` // slugs, without All
}

func clientAgentsOf(v agent.Visibility) ClientAgents {
	if v.All {
		return ClientAgents{All: true}
	}
	return ClientAgents{Agents: v.Slugs()}
}

// String says what the client sees: "all agents", "no agents", "2 agents:
// researcher, scribe".
func (a ClientAgents) String() string {
	if a.All {
		return "all agents"
	}
	return agent.NewVisibility(a.Agents).String()
}

// visibilityRoutes serves which agents each client sees.
func visibilityRoutes(mux *http.ServeMux, core Core) {
	mux.HandleFunc("GET /v1/tokens/{name}/agents", func(w http.ResponseWriter, r *http.Request) {
		v, err := core.Clients.Visibility(r.PathValue("name"))
		if err != nil {
			replyErr(w, err)
			return
		}
		reply(w, http.StatusOK, clientAgentsOf(v))
	})
	mux.HandleFunc("PUT /v1/tokens/{name}/agents", func(w http.ResponseWriter, r *http.Request) {
		var req ClientAgents
		if !decode(w, r, 1<<20, &req, `the request body must be JSON like {"all": false, "agents": ["researcher"]}`) {
			return
		}
		name := r.PathValue("name")
		if err := core.Clients.SetAgents(r.Context(), name, req.All, req.Agents); err != nil {
			replyErr(w, err)
			return
		}
		v, err := core.Clients.Visibility(name)
		if err != nil {
			replyErr(w, err)
			return
		}
		reply(w, http.StatusOK, clientAgentsOf(v))
	})
}

// withAgents fills in which agents each client sees.
func withAgents(core Core, cs []agent.Client) []TokenInfo {
	out := tokenInfos(cs)
	for i, c := range cs {
		a := clientAgentsOf(core.Clients.VisibleTo(c.ID))
		out[i].Agents = &a
	}
	return out
}

// ClientAgents returns which agents the named client sees.
func (c *Client) ClientAgents(ctx context.Context, name string) (ClientAgents, error) {
	var out ClientAgents
	err := c.do(ctx, http.MethodGet, "/v1/tokens/"+url.PathEscape(name)+"/agents", nil, &out)
	return out, err
}

// SetClientAgents sets which agents the named client sees, and returns
// them as set.
func (c *Client) SetClientAgents(ctx context.Context, name string, all bool, slugs []string) (ClientAgents, error) {
	var out ClientAgents
	err := c.do(ctx, http.MethodPut, "/v1/tokens/"+url.PathEscape(name)+"/agents", ClientAgents{All: all, Agents: slugs}, &out)
	return out, err
}

// CoreClientAgents and SetCoreClientAgents are ClientAgents and
// SetClientAgents on a core in this process, for when the app is not
// running and the command line opens the store itself.
func CoreClientAgents(core Core, name string) (ClientAgents, error) {
	v, err := core.Clients.Visibility(name)
	return clientAgentsOf(v), err
}

func SetCoreClientAgents(ctx context.Context, core Core, name string, all bool, slugs []string) (ClientAgents, error) {
	if err := core.Clients.SetAgents(ctx, name, all, slugs); err != nil {
		return ClientAgents{}, err
	}
	return CoreClientAgents(core, name)
}
