package desktop

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/agent/agenttest"
	"github.com/deskhand/deskhand/store/storetest"
)

// With the real core: the desktop's kill switch takes the agent off the
// served list, and an answer typed in a popup reaches the broker and
// completes the waiting turn.
func TestWithTheRealCore(t *testing.T) {
	core := askingCore(t)
	if _, err := core.Agents().Save(t.Context(), agent.Agent{Slug: "assistant", Model: "m", Enabled: true, Conversations: true}); err != nil {
		t.Fatal(err)
	}
	a, ui := newTestApp(t, CoreOf(core))
	a.refresh()
	ui.settle()

	// The popup.
	events := core.Events().Subscribe(t.Context())
	done := make(chan *agent.RunResult, 1)
	go func() {
		res, err := core.Conversations().Run(context.Background(), agent.RunRequest{Agent: "assistant", Principal: "p", Message: "hi"})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	p := awaitPopup(t, a, events)
	test.Type(p.text, "Ada")
	test.Tap(p.send)
	select {
	case res := <-done:
		if res.Text != "hello Ada" {
			t.Errorf("the turn got %q", res.Text)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the answer did not reach the turn")
	}
	// The core closes the question: the popup goes, and its countdown
	// with it (settle waits for the App's goroutines).
	for open := true; open; {
		select {
		case e := <-events:
			a.handle(e)
			_, open = a.questions.popups[p.q.ID]
		case <-time.After(10 * time.Second):
			t.Fatal("the popup stayed open after the answer")
		}
	}

	// The kill switch.
	row := a.agents.list.CreateItem()
	a.agents.list.UpdateItem(0, row)
	test.Tap(row.(*fyne.Container).Objects[1].(*widget.Check))
	ui.settle()
	if served := core.Agents().Enabled(); len(served) != 0 {
		t.Errorf("still served after the kill switch: %+v", served)
	}
}

// awaitPopup handles the core's events, as the event pump would on fyne's
// goroutine, until a question's popup is open.
func awaitPopup(t *testing.T, a *App, events <-chan agent.Event) *popup {
	t.Helper()
	for {
		select {
		case e := <-events:
			a.handle(e)
			if p := a.questions.popups[e.Question]; p != nil {
				return p
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no popup")
		}
	}
}

// askingCore is a real core (SQLite file, broker, desktop on) whose model
// asks "Your name?" once, then greets whatever it was told.
func askingCore(t *testing.T) *agent.Core {
	t.Helper()
	model := &agenttest.Model{Reply: func(ctx context.Context, n int, req agent.ChatRequest, onDelta func(agent.Delta)) (agent.ChatResponse, error) {
		if n == 1 {
			return agenttest.Calls("q1", "ask_user", map[string]any{"question": "Your name?"}), nil
		}
		return agenttest.Text("hello " + req.Messages[len(req.Messages)-1].Content), nil
	}}
	core, err := agent.New(t.Context(), agent.Config{History: storetest.Open(t), Desktop: true,
		Models: map[agent.Backend]agent.Model{agent.BackendOllama: model}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	return core
}

// slowClient answers a question as a client would, once told to.
type slowClient struct{ answer chan struct{} }

func (c slowClient) Ask(ctx context.Context, q agent.Question) (agent.Answer, error) {
	select {
	case <-c.answer:
		return agent.Answer{Text: "from the client"}, nil
	case <-ctx.Done():
		return agent.Answer{}, ctx.Err()
	}
}

// TestClientAnswersFirstClosesThePopup: with the real broker, the client's
// answer closes the desktop's popup.
func TestClientAnswersFirstClosesThePopup(t *testing.T) {
	core := askingCore(t)
	if _, err := core.Agents().Save(t.Context(), agent.Agent{Slug: "assistant", Model: "m", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	a, _ := newTestApp(t, CoreOf(core))
	a.questions.after = func(_ time.Duration, f func()) { f() } // no grace: the client answers later
	events := core.Events().Subscribe(t.Context())
	client := slowClient{answer: make(chan struct{})}
	go func() {
		_, _ = core.Conversations().Run(agent.WithAsker(context.Background(), client), agent.RunRequest{Agent: "assistant", Principal: "p", Message: "hi"})
	}()
	var id string
	for id == "" {
		e := <-events
		a.handle(e)
		if _, open := a.questions.popups[e.Question]; open {
			id = e.Question
		}
	}
	close(client.answer)
	timeout := time.After(time.Second) // the popup closes within a second
	for {
		select {
		case e := <-events:
			a.handle(e)
			if _, open := a.questions.popups[id]; !open {
				return
			}
		case <-timeout:
			t.Fatal("the popup stayed open after the client answered")
		}
	}
}

// With the real core: a provider added in Settings → Models keeps its key
// in the keychain (and nowhere in the form), answers Check, is offered in
// the agent editor with its models, and cannot be removed while an agent
// runs on it.
func TestProvidersWithTheRealCore(t *testing.T) {
	secrets := &agenttest.Secrets{}
	conn := &listingConnector{}
	core, err := agent.New(t.Context(), agent.Config{History: storetest.Open(t), Secrets: secrets, Connector: conn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(core.Close)
	a, ui := newTestApp(t, CoreOf(core))
	a.refresh()
	ui.settle()
	m := a.models
	if m.list.Length() != 1 || m.providers[0].Name != agent.OllamaProvider {
		t.Fatalf("a new store's providers: %+v", m.providers)
	}
	test.Type(m.name, "lmstudio")
	m.kind.SetSelected(string(agent.ProviderOpenAICompatible))
	test.Type(m.address, "http://127.0.0.1:1234/v1")
	test.Type(m.key, "sk-local")
	test.Tap(m.save)
	ui.settle()
	if got, _ := secrets.Get(agent.ProviderSecretKey("lmstudio")); got != "sk-local" || m.key.Text != "" || m.status.Text != "Saved lmstudio." {
		t.Fatalf("after saving: keychain %q, key field %q, status %q", got, m.key.Text, m.status.Text)
	}
	m.check("lmstudio")
	ui.settle()
	if m.checked["lmstudio"] != "● answers: 2 models" || !conn.connected("lmstudio key=sk-local") {
		t.Errorf("check: %q; connections %v", m.checked["lmstudio"], conn.calls)
	}

	v := a.agents
	v.provider.SetSelected("lmstudio")
	ui.settle()
	v.model.SetText("m1")
	ui.settle()
	if !strings.HasPrefix(v.capabilities.Text, "calls tools: yes") {
		t.Errorf("capabilities = %q (models hint %q)", v.capabilities.Text, v.modelHint.Text)
	}
	test.Type(v.slug, "local")
	test.Tap(v.save)
	ui.settle()
	agents := core.Agents().List()
	if len(agents) != 1 || agents[0].Provider != "lmstudio" || agents[0].Model != "m1" || agents[0].Backend != agent.BackendProvider {
		t.Fatalf("saved %+v; status %q", agents, v.status.Text)
	}
	m.remove("lmstudio")
	ui.settle()
	if !strings.Contains(m.listStatus.Text, "used by local") {
		t.Errorf("removing a provider in use: %q", m.listStatus.Text)
	}
}

// listingConnector makes models that list "m1" and "m2", and call tools.
type listingConnector struct {
	mu    sync.Mutex
	calls []string // provider name and the key it got
}

func (c *listingConnector) Connect(p agent.Provider, secret string) (agent.Model, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, p.Name+" key="+secret)
	return listingModel{&agenttest.Model{}}, nil
}

func (c *listingConnector) connected(call string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.calls, call)
}

type listingModel struct{ *agenttest.Model }

func (listingModel) ListModels(context.Context) ([]string, error) { return []string{"m1", "m2"}, nil }

func (listingModel) DescribeModel(_ context.Context, name string) (agent.ModelInfo, error) {
	return agent.ModelInfo{Name: name, Tools: agent.CapabilityYes}, nil
}
