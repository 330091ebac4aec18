package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store/storetest"
)

func TestProviders(t *testing.T) {
	ctx := t.Context()
	db := storetest.Open(t)
	got, err := db.Providers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Every store starts with Ollama at the Ollama setting's address.
	want := []agent.Provider{{Name: agent.OllamaProvider, Kind: agent.ProviderOllama, CreatedAt: time.UnixMilli(0).UTC(), UpdatedAt: time.UnixMilli(0).UTC()}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("providers of a new store (-want +got):\n%s", diff)
	}
	at := time.UnixMilli(1_700_000_000_000).UTC()
	lm := agent.Provider{Name: "lmstudio", Kind: agent.ProviderOpenAICompatible, BaseURL: "http://127.0.0.1:1234/v1", CreatedAt: at, UpdatedAt: at}
	if err := db.PutProvider(ctx, lm); err != nil {
		t.Fatal(err)
	}
	lm.BaseURL, lm.UpdatedAt = "http://127.0.0.1:1235/v1", at.Add(time.Second)
	changed := lm
	changed.CreatedAt = at.Add(time.Hour) // the first creation time stays
	if err := db.PutProvider(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if err := db.PutProvider(ctx, agent.Provider{Name: "bad", Kind: "gopher"}); err == nil {
		t.Error("a provider of an unknown kind was stored")
	}
	got, _ = db.Providers(ctx)
	if diff := cmp.Diff([]agent.Provider{lm, want[0]}, got); diff != "" { // by name
		t.Errorf("providers (-want +got):\n%s", diff)
	}
	if err := db.DeleteProvider(ctx, "lmstudio"); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteProvider(ctx, "lmstudio"); !errors.Is(err, agent.ErrNotFound) {
		t.Errorf("deleting a missing provider: %v, want ErrNotFound", err)
	}
}
