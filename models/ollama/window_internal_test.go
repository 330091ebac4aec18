package ollama

import (
	"encoding/json"
	"testing"
)

func TestStepFor(t *testing.T) {
	tests := []struct {
		tokens, limit, want int
	}{
		{tokens: 10, limit: 32768, want: 4096},
		{tokens: 3072, limit: 32768, want: 4096}, // 3072 + 1024 for the answer
		{tokens: 3073, limit: 32768, want: 8192},
		{tokens: 6144, limit: 32768, want: 8192}, // 6144 + 2048
		{tokens: 6145, limit: 32768, want: 16384},
		{tokens: 30720, limit: 32768, want: 32768},
		{tokens: 30721, limit: 131072, want: 65536},
		{tokens: 100000, limit: 131072, want: 131072},
		{tokens: 6145, limit: 10000, want: 10000}, // a model's own length, not a step
		{tokens: 10, limit: 2048, want: 2048},     // a window smaller than every step
	}
	for _, tt := range tests {
		if got := stepFor(tt.tokens, tt.limit); got != tt.want {
			t.Errorf("stepFor(%d, %d) = %d, want %d", tt.tokens, tt.limit, got, tt.want)
		}
	}
}

func TestContextLength(t *testing.T) {
	tests := []struct {
		name string
		info string
		want int
	}{
		{name: "llama", info: `{"general.architecture":"llama","llama.context_length":8192,"qwen3.context_length":40960}`, want: 8192},
		{name: "missing", info: `{"general.architecture":"llama"}`},
		{name: "no model_info", info: `{}`},
		{name: "no architecture, one length", info: `{"gemma3.context_length":131072}`, want: 131072},
		{name: "no architecture, two lengths", info: `{"a.context_length":4096,"b.context_length":8192}`},
		{name: "a string", info: `{"general.architecture":"llama","llama.context_length":"8192"}`},
		{name: "negative", info: `{"general.architecture":"llama","llama.context_length":-1}`},
		{name: "fraction", info: `{"general.architecture":"llama","llama.context_length":4096.5}`},
		{name: "huge", info: `{"general.architecture":"llama","llama.context_length":1e300}`},
		{name: "architecture not a string", info: `{"general.architecture":7,"llama.context_length":4096}`, want: 4096},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mi map[string]any
			if err := json.Unmarshal([]byte(tt.info), &mi); err != nil {
				t.Fatal(err)
			}
			if got := contextLength(mi); got != tt.want {
				t.Errorf("contextLength(%s) = %d, want %d", tt.info, got, tt.want)
			}
		})
	}
}

func TestTruncatedAnyway(t *testing.T) {
	tests := []struct {
		prompt, numCtx int
		want           bool
	}{
		{prompt: 4096, numCtx: 4096, want: true},
		{prompt: 3968, numCtx: 4096, want: true}, // within 1/32 (128 tokens) of the window
		{prompt: 3967, numCtx: 4096},
		{prompt: 40, numCtx: 4096},
		{prompt: 0, numCtx: 0},
		{prompt: 32000, numCtx: 32768, want: true},
	}
	for _, tt := range tests {
		if got := truncatedAnyway(tt.prompt, tt.numCtx); got != tt.want {
			t.Errorf("truncatedAnyway(%d, %d) = %v, want %v", tt.prompt, tt.numCtx, got, tt.want)
		}
	}
}
