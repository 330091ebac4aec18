package agent

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// findWait bounds how long Find waits for each kind of server to answer.
const findWait = 5 * time.Second

// Find sets up the model server that answers at address, whatever it is:
// Ollama (the provider "ollama" then points there: one Ollama, one
// address) or an OpenAI-compatible server such as LM Studio, llama.cpp or
// vLLM (a provider of that address, or a new one named after its port).
// It returns the provider saved and the models its server lists. When
// nothing answers, nothing changes.
func (pv *Providers) Find(ctx context.Context, address string) (Provider, []string, error) {
	address = strings.TrimRight(strings.TrimSpace(address), "/")
	if address != "" && !strings.Contains(address, "://") {
		address = "http://" + address
	}
	u, err := url.Parse(address)
	if err != nil || address == "" || u.Host == "" {
		return Provider{}, nil, Userf(err, "%q is not a server address: write it as http://host:port", address)
	}
	if pv.connector == nil {
		return Provider{}, nil, Userf(nil, "model servers cannot be reached from here")
	}
	tries := []Provider{{Name: OllamaProvider, Kind: ProviderOllama, BaseURL: address}}
	if !strings.HasSuffix(u.Path, "/v1") {
		tries = append(tries, pv.compatibleAt(address+"/v1", u))
	}
	tries = append(tries, pv.compatibleAt(address, u))
	for _, p := range tries {
		if err := validateProvider(&p); err != nil {
			return Provider{}, nil, err
		}
		models, ok := pv.lists(ctx, p)
		if !ok {
			continue
		}
		saved, err := pv.Save(ctx, p, KeyChange{})
		return saved, models, err
	}
	return Provider{}, nil, Userf(nil, "nothing answered at %s as Ollama or as an OpenAI-compatible server (LM Studio, llama.cpp, vLLM): is it running, and is the address right?", address)
}

// compatibleAt is an OpenAI-compatible provider at base: the one saved
// there, else a new one named after the port.
func (pv *Providers) compatibleAt(base string, u *url.URL) Provider {
	for _, p := range pv.List() {
		if p.Kind == ProviderOpenAICompatible && strings.TrimRight(p.BaseURL, "/") == base {
			return p.Provider
		}
	}
	name := "server"
	if port := u.Port(); port != "" {
		name = fmt.Sprintf("server-%s", port)
	}
	return Provider{Name: name, Kind: ProviderOpenAICompatible, BaseURL: base}
}

// lists asks the server of a provider not saved yet for its models.
func (pv *Providers) lists(ctx context.Context, p Provider) ([]string, bool) {
	m, err := pv.connector.Connect(p, "")
	if err != nil {
		return nil, false
	}
	l, ok := m.(ModelLister)
	if !ok {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(ctx, findWait)
	defer cancel()
	models, err := l.ListModels(ctx)
	return models, err == nil
}
