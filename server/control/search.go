package control

import (
	"context"
	"net/http"

	"github.com/deskhand/deskhand/server/agent"
)

// SearchRequest is a search of every stored conversation: the words, and
// optionally an agent (slug or ID), a client (name, ID or "local") and
// how many results.
type SearchRequest struct {
	Text   string `json:"text"`
	Agent  string `json:"agent,omitempty"`
	Client string `json:"client,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

func (r SearchRequest) query() agent.SearchQuery {
	return agent.SearchQuery{Text: r.Text, Agent: r.Agent, Client: r.Client, Limit: r.Limit}
}

// searchRoutes serves search over all history, for the person's command
// line (the socket is the user's own).
func searchRoutes(mux *http.ServeMux, core Core) {
	mux.HandleFunc("POST /v1/search", func(w http.ResponseWriter, r *http.Request) {
		var req SearchRequest
		if !decode(w, r, 1<<20, &req, `the request body must be JSON like {"text": "budget", "agent": "researcher", "client": "cursor", "limit": 20}`) {
			return
		}
		hits, err := core.Conversations.Search(r.Context(), req.query())
		if err != nil {
			replyErr(w, err)
			return
		}
		reply(w, http.StatusOK, hits)
	})
}

// Search finds the conversations whose messages hold the words, newest
// first, through the running app.
func (c *Client) Search(ctx context.Context, req SearchRequest) ([]agent.SearchHit, error) {
	var out []agent.SearchHit
	err := c.do(ctx, http.MethodPost, "/v1/search", req, &out)
	return out, err
}

// CoreSearch is Search on a core in this process, for when the app is
// not running and the command line opens the store itself.
func CoreSearch(ctx context.Context, core Core, req SearchRequest) ([]agent.SearchHit, error) {
	return core.Conversations.Search(ctx, req.query())
}
