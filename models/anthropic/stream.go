package anthropic

import (
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
)

// event is what Deskhand reads of one event of a streamed reply
// (https://docs.anthropic.com/en/docs/build-with-claude/streaming):
// message_start, content_block_start, content_block_delta (text_delta,
// thinking_delta, input_json_delta; the others are skipped),
// content_block_stop, message_delta and message_stop. ping and error never
// get here: the SDK's ssestream skips the one and returns the other as an
// *sdk.Error.
type event struct {
	Type  string `json:"type"`
	Index int64  `json:"index"`
	// Message comes with message_start.
	Message *struct {
		Model       string         `json:"model"`
		Content     []contentBlock `json:"content"`
		StopReason  sdk.StopReason `json:"stop_reason"`
		StopDetails *stopDetails   `json:"stop_details"`
		Usage       usage          `json:"usage"`
	} `json:"message"`
	// ContentBlock comes with content_block_start.
	ContentBlock *contentBlock `json:"content_block"`
	// Delta comes with content_block_delta (Type, Text, Thinking,
	// PartialJSON) and message_delta (StopReason, StopDetails).
	Delta struct {
		Type        string         `json:"type"`
		Text        string         `json:"text"`
		Thinking    string         `json:"thinking"`
		PartialJSON string         `json:"partial_json"`
		StopReason  sdk.StopReason `json:"stop_reason"`
		StopDetails *stopDetails   `json:"stop_details"`
	} `json:"delta"`
	// Usage comes with message_delta.
	Usage usage `json:"usage"`
}

type contentBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type stopDetails struct {
	Explanation string `json:"explanation"`
}

// usage is the usage object of message_start and message_delta. The
// counts a message_delta leaves out (or sends as null) keep the value
// message_start gave them; output_tokens is always overwritten.
type usage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             int64  `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
}

// message is a streamed reply being put together, as the SDK's
// Message.Accumulate does it, with only what reply reads.
type message struct {
	model           string
	stopReason      sdk.StopReason
	stopExplanation string
	usage           struct{ input, output, cacheCreation, cacheRead int64 }
	content         []*block
}

// block is one content block: its type, and the text or tool call
// (id, name and the input put together from input_json_delta) it holds.
type block struct {
	typ, id, name string
	text          []byte
	input         json.RawMessage
}

func newBlock(b *contentBlock) *block {
	return &block{typ: b.Type, id: b.ID, name: b.Name, text: []byte(b.Text), input: b.Input}
}

// add takes in one event.
func (m *message) add(ev *event) error {
	switch ev.Type {
	case "message_start":
		if ev.Message == nil {
			*m = message{}
			return nil
		}
		s := ev.Message
		*m = message{model: s.Model, stopReason: s.StopReason}
		if s.StopDetails != nil {
			m.stopExplanation = s.StopDetails.Explanation
		}
		m.setUsage(&s.Usage)
		for i := range s.Content {
			m.content = append(m.content, newBlock(&s.Content[i]))
		}
	case "message_delta":
		// stop_reason and stop_details are always sent, and null is their
		// final value when the turn carries no such detail.
		m.stopReason = ev.Delta.StopReason
		m.stopExplanation = ""
		if ev.Delta.StopDetails != nil {
			m.stopExplanation = ev.Delta.StopDetails.Explanation
		}
		m.setUsage(&ev.Usage)
	case "content_block_start":
		// Blocks start in index order with no gaps.
		if ev.Index != int64(len(m.content)) {
			return fmt.Errorf("received event of type %s for content block at index %d, expected index %d", ev.Type, ev.Index, len(m.content))
		}
		var b contentBlock
		if ev.ContentBlock != nil {
			b = *ev.ContentBlock
		}
		m.content = append(m.content, newBlock(&b))
	case "content_block_delta":
		if err := m.check(ev); err != nil {
			return err
		}
		b := m.content[ev.Index]
		switch ev.Delta.Type {
		case "text_delta":
			b.text = append(b.text, ev.Delta.Text...)
		case "input_json_delta":
			if ev.Delta.PartialJSON != "" {
				if string(b.input) == "{}" {
					b.input = nil
				}
				b.input = append(b.input, ev.Delta.PartialJSON...)
			}
		}
	case "content_block_stop":
		if err := m.check(ev); err != nil {
			return err
		}
		m.content[ev.Index].end()
	case "message_stop":
		for _, b := range m.content {
			b.end()
		}
	}
	return nil
}

// setUsage takes in a usage object: output_tokens always, the others when
// they are given.
func (m *message) setUsage(u *usage) {
	m.usage.output = u.OutputTokens
	if u.InputTokens != nil {
		m.usage.input = *u.InputTokens
	}
	if u.CacheCreationInputTokens != nil {
		m.usage.cacheCreation = *u.CacheCreationInputTokens
	}
	if u.CacheReadInputTokens != nil {
		m.usage.cacheRead = *u.CacheReadInputTokens
	}
}

func (m *message) check(ev *event) error {
	if ev.Index < 0 || ev.Index >= int64(len(m.content)) {
		return fmt.Errorf("received event of type %s for content block at index %d but there are only %d content blocks", ev.Type, ev.Index, len(m.content))
	}
	return nil
}

// end closes a block as the SDK does: input that is not valid JSON (a tool
// call cut off) becomes {}.
func (b *block) end() {
	if len(b.input) > 0 && !json.Valid(b.input) {
		b.input = json.RawMessage(`{}`)
	}
}
