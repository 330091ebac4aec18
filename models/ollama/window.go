package ollama

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ollama/ollama/api"

	"github.com/deskhand/deskhand/server/agent"
)

// Ollama cuts a prompt longer than the context window without a word: it
// drops the oldest messages, or cuts the prompt's tokens from the front,
// which can take the system prompt and the tools' definitions
// (ollama/ollama#18107). So Chat sizes the window itself and leaves out
// what does not fit in a way it can report:
//
//   - It estimates the prompt's tokens (see [estimateTokens]), adds room
//     for the answer, and asks for the smallest of a few fixed window sizes
//     ([contextSteps]) that holds both, as the request's num_ctx: a
//     num_ctx that changed on every call would make Ollama reload the
//     model each time.
//   - The window is capped by the model's context length (/api/show) and
//     by the context cap ([WithContextCap]).
//   - When the prompt does not fit even so, the oldest messages of the
//     transcript are left out, counted in ChatResponse.Trimmed; an
//     assistant's tool calls go with their results. The system prompt,
//     the tools and the latest user message (and what follows it) are
//     always sent; when they alone do not fit, Chat fails with
//     [ErrContextTooLong].
//   - The request says "truncate": false, so an Ollama that knows the
//     field (v0.17.4 does) fails rather than cutting what the estimate
//     missed; an older one is caught afterwards (see [truncatedAnyway]).

// DefaultContextCap is the largest window Chat asks for unless
// WithContextCap says otherwise: a larger one costs memory (the KV cache
// grows with it) whether the prompt needs it or not.
const DefaultContextCap = 32768

// contextSteps are the window sizes Chat chooses from, smallest first.
var contextSteps = []int{4096, 8192, 16384, 32768, 65536, 131072}

// maxAnswerRoom is the most room left for the answer in a window.
const maxAnswerRoom = 2048

// ErrContextTooLong is the Err of the *agent.UserError Chat returns when
// the system prompt, the tools and the latest message do not fit the
// model's context window.
var ErrContextTooLong = errors.New("ollama: the prompt does not fit the context window")

// answerRoom is the room kept for the answer in a window of n tokens:
// 2048 tokens, or a quarter of a smaller window.
func answerRoom(n int) int { return min(maxAnswerRoom, n/4) }

// estimateTokens is a deliberately high estimate of the tokens n bytes of
// JSON take: a third of the bytes, rounded up. Ollama has no tokenize
// endpoint (nor has its client), and each model has its own tokenizer.
// English text and code run at about four bytes a token, so this
// overestimates them by a third; text in scripts of three-byte UTF-8
// characters (CJK) runs near one token a character, which it matches. It is
// applied to each message and the tools as they go on the wire, so JSON
// keys and quoting stand for the chat template's markup around them.
func estimateTokens(n int) int { return (n + 2) / 3 }

// window is what fits into one request.
type window struct {
	numCtx   int           // the num_ctx to ask for
	messages []api.Message // what is sent
	dropped  int           // messages of the transcript left out
	tokens   int           // estimate of the prompt sent
}

// contextLimit is the largest window for a model of context length
// modelMax (0: unknown) under the context cap capTokens.
func contextLimit(modelMax, capTokens int) int {
	if modelMax > 0 && modelMax < capTokens {
		return modelMax
	}
	return capTokens
}

// stepFor is the smallest step that holds tokens and the answer's room,
// or limit when none below it does.
func stepFor(tokens, limit int) int {
	for _, s := range contextSteps {
		if s >= limit {
			break
		}
		if tokens+answerRoom(s) <= s {
			return s
		}
	}
	return limit
}

// fitWindow chooses the window for req and, when the whole prompt does not
// fit, the messages left out. modelMax is the model's context length (0:
// unknown), capTokens the context cap; toolsBytes is the length of
// req.Tools encoded in JSON.
func fitWindow(model string, req *api.ChatRequest, toolsBytes, modelMax, capTokens int) (window, error) {
	msgs := req.Messages
	sizes := make([]int, len(msgs))
	for i, msg := range msgs {
		b, err := json.Marshal(msg)
		if err != nil {
			return window{}, fmt.Errorf("ollama: message %d: %w", i, err)
		}
		sizes[i] = estimateTokens(len(b))
	}
	tools := 0
	if len(req.Tools) > 0 {
		tools = estimateTokens(toolsBytes)
	}
	total := tools
	for _, n := range sizes {
		total += n
	}
	limit := contextLimit(modelMax, capTokens)
	if total+answerRoom(limit) <= limit {
		return window{numCtx: stepFor(total, limit), messages: msgs, tokens: total}, nil
	}

	// keep is the start of what is always sent: the latest user message
	// and what follows it (the current round's tool calls and results);
	// the last message when there is no user message.
	keep := max(len(msgs)-1, 0)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			keep = i
			break
		}
	}
	drop := make([]bool, len(msgs))
	dropped := 0
	for i := 0; i < keep && total+answerRoom(limit) > limit; {
		if msgs[i].Role == "system" {
			i++
			continue
		}
		// One unit: a message, and the tool results that follow an
		// assistant's tool calls, so no result goes without its call.
		j := i + 1
		if msgs[i].Role == "assistant" && len(msgs[i].ToolCalls) > 0 {
			for j < keep && msgs[j].Role == "tool" {
				j++
			}
		}
		for ; i < j; i++ {
			drop[i] = true
			dropped++
			total -= sizes[i]
		}
	}
	if total+answerRoom(limit) > limit {
		return window{}, tooLong(model, total, len(req.Tools), modelMax, limit)
	}
	kept := make([]api.Message, 0, len(msgs)-dropped)
	for i, msg := range msgs {
		if !drop[i] {
			kept = append(kept, msg)
		}
	}
	return window{numCtx: limit, messages: kept, dropped: dropped, tokens: total}, nil
}

// tooLong says that what must be sent does not fit, and what to do.
func tooLong(model string, tokens, tools, modelMax, limit int) error {
	what := "the system prompt and the latest message"
	if tools > 0 {
		what = fmt.Sprintf("the system prompt, the %d tools' definitions and the latest message", tools)
	}
	msg := fmt.Sprintf("the conversation is too long for model '%s': %s come to about %d tokens, which with %d tokens of room for the answer do not fit its %d-token context window",
		model, what, tokens, answerRoom(limit), limit)
	var todo []string
	if limit < modelMax || modelMax == 0 {
		if modelMax > 0 {
			msg += fmt.Sprintf(" (Deskhand's context cap; the model can take %d)", modelMax)
		} else {
			msg += " (Deskhand's context cap)"
		}
		todo = append(todo, "raise the context cap in Settings")
	}
	todo = append(todo, "choose a model with a larger context window")
	if tools > 0 {
		todo = append(todo, "give the agent fewer tools")
	}
	todo = append(todo, "shorten the agent's prompt or the message")
	msg += " — "
	for i, t := range todo {
		switch {
		case i == 0:
		case i == len(todo)-1:
			msg += ", or "
		default:
			msg += ", "
		}
		msg += t
	}
	return agent.Userf(ErrContextTooLong, "%s", msg)
}

// truncatedAnyway reports whether a reply shows that Ollama cut the prompt
// although the estimate said it fit (an Ollama that ignores "truncate",
// or a prompt denser than the estimate): the window was chosen to leave at
// least a quarter of it, or 2048 tokens, for the answer, so a prompt that
// filled it to within 1/32 can only have been cut to fit. A prompt Ollama
// took from its cache counts fewer tokens, so this can miss a cut, but it
// does not report one that did not happen.
func truncatedAnyway(promptTokens, numCtx int) bool {
	return numCtx > 0 && promptTokens >= numCtx-numCtx/32
}
