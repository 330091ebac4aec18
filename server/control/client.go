package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/deskhand/deskhand/server/agent"
)

// ErrNotRunning means no Deskhand answers on the socket.
var ErrNotRunning = errors.New("deskhand is not running")

// Client talks to a running Deskhand over its control socket.
type Client struct {
	http *http.Client
}

// Dial returns a client for the socket at path, or ErrNotRunning when
// nothing answers there.
func Dial(path string) (*Client, error) {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return nil, ErrNotRunning
	}
	c.Close()
	return &Client{http: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		},
	}}}, nil
}

// CreateToken creates a client and returns its token.
func (c *Client) CreateToken(ctx context.Context, name string) (string, error) {
	var out createdToken
	err := c.do(ctx, http.MethodPost, "/v1/tokens", tokenRequest{Name: name}, &out)
	return out.Token, err
}

// Tokens lists active clients.
func (c *Client) Tokens(ctx context.Context) ([]TokenInfo, error) {
	var out []TokenInfo
	err := c.do(ctx, http.MethodGet, "/v1/tokens", nil, &out)
	return out, err
}

// RevokeToken revokes the named client's token.
func (c *Client) RevokeToken(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(name), nil, nil)
}

// RotateToken gives the named client a new token (creating the client if
// needed); the old token stops working at once.
func (c *Client) RotateToken(ctx context.Context, name string) (string, error) {
	var out createdToken
	err := c.do(ctx, http.MethodPost, "/v1/tokens/"+url.PathEscape(name)+"/rotate", nil, &out)
	return out.Token, err
}

// Agents lists every agent, enabled or not.
func (c *Client) Agents(ctx context.Context) ([]agent.Agent, error) {
	var out []agent.Agent
	err := c.do(ctx, http.MethodGet, "/v1/agents", nil, &out)
	return out, err
}

// SaveAgent creates (no ID) or updates an agent; clients hear of it at once.
func (c *Client) SaveAgent(ctx context.Context, a agent.Agent) (agent.Agent, error) {
	var out agent.Agent
	err := c.do(ctx, http.MethodPut, "/v1/agents", a, &out)
	return out, err
}

// SetAgentEnabled turns an agent on or off.
func (c *Client) SetAgentEnabled(ctx context.Context, slug string, enabled bool) error {
	return c.do(ctx, http.MethodPost, "/v1/agents/"+url.PathEscape(slug)+"/enabled", map[string]bool{"enabled": enabled}, nil)
}

// DeleteAgent removes an agent and its conversations.
func (c *Client) DeleteAgent(ctx context.Context, slug string) error {
	return c.do(ctx, http.MethodDelete, "/v1/agents/"+url.PathEscape(slug), nil, nil)
}

// Providers lists the providers, with whether each has an API key and
// which agents use it.
func (c *Client) Providers(ctx context.Context) ([]agent.ProviderStatus, error) {
	var out []agent.ProviderStatus
	err := c.do(ctx, http.MethodGet, "/v1/providers", nil, &out)
	return out, err
}

// SaveProvider adds or changes a provider (by name) and sets or removes its
// API key in the running app's keychain. The key goes over the private
// socket only, in the request body.
func (c *Client) SaveProvider(ctx context.Context, p agent.Provider, key agent.KeyChange) (agent.Provider, error) {
	var out agent.Provider
	err := c.do(ctx, http.MethodPut, "/v1/providers", saveProviderRequest{Provider: p, SetKey: key.Set, Key: key.Key}, &out)
	return out, err
}

// DeleteProvider removes a provider no agent uses, and its API key.
func (c *Client) DeleteProvider(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/v1/providers/"+url.PathEscape(name), nil, nil)
}

// ProviderModels asks the provider's server for the models it offers: the
// check that its address and key work.
func (c *Client) ProviderModels(ctx context.Context, name string) ([]string, error) {
	var out []string
	err := c.do(ctx, http.MethodGet, "/v1/providers/"+url.PathEscape(name)+"/models", nil, &out)
	return out, err
}

// Status asks the running app about itself.
func (c *Client) Status(ctx context.Context) (Status, error) {
	var out Status
	err := c.do(ctx, http.MethodGet, "/v1/status", nil, &out)
	return out, err
}

// ShowWindow asks the running app to bring its window forward.
func (c *Client) ShowWindow(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/v1/window/show", nil, nil)
}

// Questions lists the questions waiting for a person.
func (c *Client) Questions(ctx context.Context) ([]QuestionInfo, error) {
	var out []QuestionInfo
	err := c.do(ctx, http.MethodGet, "/v1/questions", nil, &out)
	return out, err
}

// Answer answers a pending question with form content (see
// agent.Question.Schema), or declines it.
func (c *Client) Answer(ctx context.Context, id string, content map[string]any, decline bool) error {
	return c.do(ctx, http.MethodPost, "/v1/questions/"+url.PathEscape(id)+"/answer", answerRequest{Content: content, Decline: decline}, nil)
}

func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://deskhand"+path, body)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("control channel: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		var p problem
		if json.NewDecoder(resp.Body).Decode(&p) == nil && p.Error != "" {
			if resp.StatusCode == http.StatusNotFound {
				return &agent.UserError{Msg: p.Error, Err: agent.ErrNotFound}
			}
			return &agent.UserError{Msg: p.Error}
		}
		return fmt.Errorf("control channel: %s", resp.Status)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("control channel: decode reply: %w", err)
	}
	return nil
}

// Tokens lists the core's active clients the way Client.Tokens does, for
// when the app is not running and the command line opens the store itself.
func Tokens(core Core) []TokenInfo { return withAgents(core, core.Clients.List()) }

// ApprovalRules lists the approval rules ("always allow"), oldest first.
func (c *Client) ApprovalRules(ctx context.Context) ([]RuleInfo, error) {
	var out []RuleInfo
	err := c.do(ctx, http.MethodGet, "/v1/approval-rules", nil, &out)
	return out, err
}

// RevokeApprovalRule deletes a rule: the next call it covered asks again.
func (c *Client) RevokeApprovalRule(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/approval-rules/"+url.PathEscape(id), nil, nil)
}

// EnableApprovalRule turns on a rule that waits for review, for every
// client it names (all when none).
func (c *Client) EnableApprovalRule(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "/v1/approval-rules/"+url.PathEscape(id)+"/enable", nil, nil)
}
