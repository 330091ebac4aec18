package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3/option"

	"github.com/deskhand/deskhand/server/agent"
)

// DescribeModel says what the model can do, as far as the server tells:
//
//   - OpenAI: the model must exist (GET /models/{id}); tools and
//     structured output are "yes" for the model families that OpenAI
//     documents with function calling and Structured Outputs in Chat
//     Completions (see [knownOpenAI]), with their context windows, and
//     unknown for every other name.
//   - LM Studio: its native listing (/api/v1/models, else /api/v0/models)
//     gives the context length (of the loaded instance when there is one)
//     and whether the model was trained for tool use ("yes"; "no" is
//     reported as unknown, since LM Studio still offers tools to such
//     models through its default prompt).
//   - Any other compatible server cannot say: everything is unknown, and
//     the first failure names what was missing.
func (m *Model) DescribeModel(ctx context.Context, name string) (agent.ModelInfo, error) {
	info := agent.ModelInfo{Name: name}
	if err := m.missingKey(); err != nil {
		return info, err
	}
	if m.kind == KindOpenAI {
		fctx, fail := withFailure(ctx)
		if _, err := m.models.Get(fctx, name, option.WithMaxRetries(0)); err != nil {
			return info, m.userError(fctx, err, fail, request{model: name})
		}
		if k, ok := knownOpenAI(name); ok {
			info.Tools, info.StructuredOutput, info.ContextLength = agent.CapabilityYes, agent.CapabilityYes, k.context
		}
		return info, nil
	}
	found, err := m.describeLMStudio(ctx, &info)
	if err != nil || found {
		return info, err
	}
	// Not LM Studio: at least check the server answers and lists models.
	if _, err := m.ListModels(ctx); err != nil {
		return info, err
	}
	return info, nil
}

// openAIModel is what OpenAI's documentation says of a model family.
type openAIModel struct {
	pattern *regexp.Regexp
	context int
}

// openAIModels are the families whose model pages
// (platform.openai.com/docs/models) list function calling and Structured
// Outputs for Chat Completions, each as the alias or a dated snapshot.
// gpt-4o-2024-05-13 predates Structured Outputs and is left out, as are
// the audio, search and realtime variants, which do not take both.
var openAIModels = []openAIModel{
	{regexp.MustCompile(`^gpt-4o(-mini)?(-\d{4}-\d{2}-\d{2})?$`), 128_000},
	{regexp.MustCompile(`^gpt-4\.1(-mini|-nano)?(-\d{4}-\d{2}-\d{2})?$`), 1_047_576},
	{regexp.MustCompile(`^gpt-5(-mini|-nano)?(-\d{4}-\d{2}-\d{2})?$`), 400_000},
}

// knownOpenAI looks a model up in [openAIModels].
func knownOpenAI(name string) (openAIModel, bool) {
	if name == "gpt-4o-2024-05-13" {
		return openAIModel{}, false
	}
	for _, k := range openAIModels {
		if k.pattern.MatchString(name) {
			return k, true
		}
	}
	return openAIModel{}, false
}

// LM Studio's listings (lmstudio-ai/docs, 1_developer/2_rest/list.md and
// endpoints.md).
type (
	lmsV1List struct {
		Models []struct {
			Type             string        `json:"type"`
			Key              string        `json:"key"`
			LoadedInstances  []lmsInstance `json:"loaded_instances"`
			MaxContextLength int           `json:"max_context_length"`
			Capabilities     *struct {
				TrainedForToolUse bool `json:"trained_for_tool_use"`
			} `json:"capabilities"`
		} `json:"models"`
	}
	lmsInstance struct {
		ID     string `json:"id"`
		Config struct {
			ContextLength int `json:"context_length"`
		} `json:"config"`
	}
)

// describeLMStudio asks LM Studio's native API about the model, if the
// server is LM Studio (its base URL ends in /v1 and /api/v1/models or
// /api/v0/models answers). found reports that it was.
func (m *Model) describeLMStudio(ctx context.Context, info *agent.ModelInfo) (found bool, err error) {
	root, ok := strings.CutSuffix(m.BaseURL(), "/v1")
	if !ok {
		return false, nil
	}
	var v1 lmsV1List
	ok, err = m.getJSON(ctx, root+"/api/v1/models", &v1)
	if err != nil {
		return false, err
	}
	if ok && v1.Models != nil {
		for _, mo := range v1.Models {
			if mo.Key != info.Name && !slices.ContainsFunc(mo.LoadedInstances, func(i lmsInstance) bool { return i.ID == info.Name }) {
				continue
			}
			info.ContextLength = mo.MaxContextLength
			for _, inst := range mo.LoadedInstances {
				if inst.Config.ContextLength > 0 {
					info.ContextLength = inst.Config.ContextLength
					break
				}
			}
			if mo.Capabilities != nil && mo.Capabilities.TrainedForToolUse {
				info.Tools = agent.CapabilityYes
			}
			return true, nil
		}
		return true, m.lmStudioMissing(ctx, info.Name)
	}
	var v0 struct {
		Data []struct {
			ID               string   `json:"id"`
			Type             string   `json:"type"`
			MaxContextLength int      `json:"max_context_length"`
			Capabilities     []string `json:"capabilities"`
		} `json:"data"`
	}
	ok, err = m.getJSON(ctx, root+"/api/v0/models", &v0)
	if err != nil || !ok || v0.Data == nil {
		return false, err
	}
	for _, mo := range v0.Data {
		if mo.ID != info.Name {
			continue
		}
		info.ContextLength = mo.MaxContextLength
		if slices.Contains(mo.Capabilities, "tool_use") {
			info.Tools = agent.CapabilityYes
		}
		return true, nil
	}
	return true, m.lmStudioMissing(ctx, info.Name)
}

func (m *Model) lmStudioMissing(ctx context.Context, name string) error {
	return &agent.UserError{Msg: m.modelNotFound(ctx, name), Err: fmt.Errorf("%w: %q is not in LM Studio's model list", ErrModelNotFound, name)}
}

// getJSON gets url with the key, decoding a 200 answer into v. ok is
// false for any other answer (the endpoint is not there); err is set when
// the server cannot be reached at all.
func (m *Model) getJSON(ctx context.Context, url string, v any) (ok bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	if m.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+m.apiKey)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := m.http.Do(req)
	if err != nil {
		return false, m.userError(ctx, err, nil, request{})
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return false, nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(v); err != nil {
		return false, nil
	}
	return true, nil
}
