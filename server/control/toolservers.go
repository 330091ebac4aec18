package control

import (
	"context"
	"net/http"
	"net/url"

	"github.com/deskhand/deskhand/server/agent"
)

// ToolServerCore is what the tool-server endpoints need of the core.
type ToolServerCore interface {
	List() []agent.ToolServer
	Statuses() []agent.ToolServerStatus
	Add(ctx context.Context, s agent.ToolServer, sec agent.ToolServerSecrets) error
	Remove(ctx context.Context, name string) error
	Check(ctx context.Context, name string) (agent.ToolServerCheck, error)
	Attach(ctx context.Context, slug string, req agent.ToolServerAttachment) (agent.AgentToolServer, error)
	Detach(ctx context.Context, slug, server string) error
	Attached(slug string) ([]agent.AgentToolServer, error)
	Repin(ctx context.Context, slug, server, tool string) error
	Held() []agent.HeldTool
}

// ToolServerInfo is a tool server as lists show it: its definition (the
// names of its secrets, never their values) and how it is doing.
type ToolServerInfo struct {
	agent.ToolServer
	Status agent.ToolServerStatus
}

// ToolServerInfos joins the servers with their statuses.
func ToolServerInfos(list []agent.ToolServer, statuses []agent.ToolServerStatus) []ToolServerInfo {
	by := make(map[string]agent.ToolServerStatus, len(statuses))
	for _, s := range statuses {
		by[s.Name] = s
	}
	out := make([]ToolServerInfo, 0, len(list))
	for _, s := range list {
		st, ok := by[s.Name]
		if !ok {
			st = agent.ToolServerStatus{Name: s.Name, State: "stopped"}
		}
		out = append(out, ToolServerInfo{ToolServer: s, Status: st})
	}
	return out
}

type addToolServerRequest struct {
	Server  agent.ToolServer
	Secrets agent.ToolServerSecrets
}

// toolServerRoutes serves the tool servers and agents' attachments.
func toolServerRoutes(mux *http.ServeMux, c Core) {
	core := c.ToolServers
	if core == nil {
		return
	}
	mux.HandleFunc("GET /v1/toolservers", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, ToolServerInfos(core.List(), core.Statuses()))
	})
	mux.HandleFunc("POST /v1/toolservers", func(w http.ResponseWriter, r *http.Request) {
		var req addToolServerRequest
		if !decode(w, r, 1<<20, &req, "the request body must be a tool server and its secrets as JSON") {
			return
		}
		noContent(w, core.Add(r.Context(), req.Server, req.Secrets))
	})
	mux.HandleFunc("DELETE /v1/toolservers/{name}", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, core.Remove(r.Context(), r.PathValue("name")))
	})
	mux.HandleFunc("POST /v1/toolservers/{name}/check", func(w http.ResponseWriter, r *http.Request) {
		check, err := core.Check(r.Context(), r.PathValue("name"))
		if err != nil {
			replyErr(w, err)
			return
		}
		reply(w, http.StatusOK, check)
	})
	mux.HandleFunc("GET /v1/toolservers/held", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, core.Held())
	})
	mux.HandleFunc("GET /v1/agents/{slug}/toolservers", func(w http.ResponseWriter, r *http.Request) {
		list, err := core.Attached(r.PathValue("slug"))
		if err != nil {
			replyErr(w, err)
			return
		}
		reply(w, http.StatusOK, list)
	})
	mux.HandleFunc("PUT /v1/agents/{slug}/toolservers", func(w http.ResponseWriter, r *http.Request) {
		var req agent.ToolServerAttachment
		if !decode(w, r, 1<<20, &req, "the request body must be an attachment as JSON") {
			return
		}
		att, err := core.Attach(r.Context(), r.PathValue("slug"), req)
		if err != nil {
			replyErr(w, err)
			return
		}
		reply(w, http.StatusOK, att)
	})
	mux.HandleFunc("DELETE /v1/agents/{slug}/toolservers/{server}", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, core.Detach(r.Context(), r.PathValue("slug"), r.PathValue("server")))
	})
	mux.HandleFunc("POST /v1/agents/{slug}/toolservers/{server}/tools/{tool}/repin", func(w http.ResponseWriter, r *http.Request) {
		noContent(w, core.Repin(r.Context(), r.PathValue("slug"), r.PathValue("server"), r.PathValue("tool")))
	})
}

// ToolServers lists the running app's tool servers with their states.
func (c *Client) ToolServers(ctx context.Context) ([]ToolServerInfo, error) {
	var out []ToolServerInfo
	err := c.do(ctx, http.MethodGet, "/v1/toolservers", nil, &out)
	return out, err
}

// AddToolServer registers a server; its secret values go over the
// private socket to the app's keychain.
func (c *Client) AddToolServer(ctx context.Context, s agent.ToolServer, sec agent.ToolServerSecrets) error {
	return c.do(ctx, http.MethodPost, "/v1/toolservers", addToolServerRequest{Server: s, Secrets: sec}, nil)
}

// RemoveToolServer stops and removes a server, detaches it and deletes
// its secrets.
func (c *Client) RemoveToolServer(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/v1/toolservers/"+url.PathEscape(name), nil, nil)
}

// CheckToolServer starts a server and lists its tools.
func (c *Client) CheckToolServer(ctx context.Context, name string) (agent.ToolServerCheck, error) {
	var out agent.ToolServerCheck
	err := c.do(ctx, http.MethodPost, "/v1/toolservers/"+url.PathEscape(name)+"/check", nil, &out)
	return out, err
}

// HeldToolServerTools lists the tools held since their definition changed.
func (c *Client) HeldToolServerTools(ctx context.Context) ([]agent.HeldTool, error) {
	var out []agent.HeldTool
	err := c.do(ctx, http.MethodGet, "/v1/toolservers/held", nil, &out)
	return out, err
}

// AgentToolServers lists the servers attached to an agent.
func (c *Client) AgentToolServers(ctx context.Context, slug string) ([]agent.AgentToolServer, error) {
	var out []agent.AgentToolServer
	err := c.do(ctx, http.MethodGet, "/v1/agents/"+url.PathEscape(slug)+"/toolservers", nil, &out)
	return out, err
}

// AttachToolServer gives an agent a server's tools.
func (c *Client) AttachToolServer(ctx context.Context, slug string, req agent.ToolServerAttachment) (agent.AgentToolServer, error) {
	var out agent.AgentToolServer
	err := c.do(ctx, http.MethodPut, "/v1/agents/"+url.PathEscape(slug)+"/toolservers", req, &out)
	return out, err
}

// DetachToolServer takes a server's tools from an agent.
func (c *Client) DetachToolServer(ctx context.Context, slug, server string) error {
	return c.do(ctx, http.MethodDelete, "/v1/agents/"+url.PathEscape(slug)+"/toolservers/"+url.PathEscape(server), nil, nil)
}

// RepinToolServerTool pins a held tool's current definition.
func (c *Client) RepinToolServerTool(ctx context.Context, slug, server, tool string) error {
	return c.do(ctx, http.MethodPost, "/v1/agents/"+url.PathEscape(slug)+"/toolservers/"+url.PathEscape(server)+"/tools/"+url.PathEscape(tool)+"/repin", nil, nil)
}
