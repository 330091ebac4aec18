package ollama

import (
	"encoding/json"
	"unicode/utf8"
)

// decodeChunk decodes one line of the chat stream into c (which it first
// zeroes), as json.Unmarshal would. Most lines carry one token,
//
//	{"model":"…","created_at":"…","message":{"role":"assistant","content":"…"},"done":false}
//
// and readSimpleChunk reads those without encoding/json's reflection,
// which was most of what Chat added per token; any line it does not take
// whole (escapes, tool calls, counts, errors, other fields, bad JSON) goes
// to json.Unmarshal.
func decodeChunk(line []byte, c *chatChunk) error {
	*c = chatChunk{}
	if readSimpleChunk(line, c) {
		return nil
	}
	*c = chatChunk{}
	return json.Unmarshal(line, c)
}

// readSimpleChunk reads line into c when it is an object of only the
// fields model, created_at (strings), message (an object of role, content
// and thinking, strings) and done (true or false), with strings of valid
// UTF-8 and no escapes. It reports whether it did; when not, c may hold
// part of the line.
func readSimpleChunk(line []byte, c *chatChunk) bool {
	p := simpleParser{b: line}
	ok := p.object(func(key []byte) bool {
		switch string(key) {
		case "model":
			return p.str(&c.Model)
		case "created_at":
			return p.skipStr()
		case "done":
			return p.boolean(&c.Done)
		case "message":
			return p.object(func(key []byte) bool {
				switch string(key) {
				case "role":
					return p.skipStr()
				case "content":
					return p.str(&c.Message.Content)
				case "thinking":
					return p.str(&c.Message.Thinking)
				}
				return false
			})
		}
		return false
	})
	p.space()
	return ok && p.i == len(p.b)
}

type simpleParser struct {
	b []byte
	i int
}

func (p *simpleParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *simpleParser) byte(want byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == want {
		p.i++
		return true
	}
	return false
}

// rawStr reads a string without escapes or control characters, of valid
// UTF-8.
func (p *simpleParser) rawStr() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start := p.i
	ascii := true
	for ; p.i < len(p.b); p.i++ {
		switch ch := p.b[p.i]; {
		case ch == '"':
			s := p.b[start:p.i]
			p.i++
			return s, ascii || utf8.Valid(s)
		case ch == '\\', ch < 0x20:
			return nil, false
		case ch >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

func (p *simpleParser) str(dst *string) bool {
	s, ok := p.rawStr()
	if ok {
		*dst = string(s)
	}
	return ok
}

// skipStr reads a string whose value is not kept, without copying it.
func (p *simpleParser) skipStr() bool {
	_, ok := p.rawStr()
	return ok
}

func (p *simpleParser) boolean(dst *bool) bool {
	p.space()
	switch rest := p.b[p.i:]; {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		*dst, p.i = true, p.i+4
	case len(rest) >= 5 && string(rest[:5]) == "false":
		*dst, p.i = false, p.i+5
	default:
		return false
	}
	return true
}

// object reads an object, handing each key to field, which reads its value
// or reports false for a key it does not take.
func (p *simpleParser) object(field func(key []byte) bool) bool {
	if !p.byte('{') {
		return false
	}
	if p.byte('}') {
		return true
	}
	for {
		key, ok := p.rawStr()
		if !ok || !p.byte(':') || !field(key) {
			return false
		}
		if p.byte('}') {
			return true
		}
		if !p.byte(',') {
			return false
		}
	}
}
