package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ArgumentDecoder is implemented by tools that decode their arguments
// before they run: DecodeArguments returns the arguments exactly as the
// tool will run them (decoded, then encoded again), or a *UserError that
// says what is wrong. An approval shows what it returns, and the tool is
// called with that, never with the model's own JSON.
type ArgumentDecoder interface {
	DecodeArguments(raw json.RawMessage) (json.RawMessage, error)
}

// maxArgumentDepth bounds the nesting of a tool call's arguments.
const maxArgumentDepth = 64

// CheckArgumentKeys refuses what Go's JSON decoding would let through
// silently: a key given twice anywhere in the arguments (the last would
// win) and, when names is not nil, a top-level key that is not exactly
// one of names (decoding matches names whatever their case, so "PATH"
// would fill "path"). raw must be one JSON object.
func CheckArgumentKeys(tool string, raw json.RawMessage, names []string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return notJSON(tool, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return Userf(nil, "invalid arguments for %s: the arguments must be a JSON object, not %s", tool, jsonKind(tok))
	}
	if err := checkObject(dec, tool, names, 1); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return Userf(err, "invalid arguments for %s: unexpected data after the arguments object; send exactly one JSON object", tool)
	}
	return nil
}

// checkObject reads an object's members after its '{', and its '}'.
func checkObject(dec *json.Decoder, tool string, names []string, depth int) error {
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return notJSON(tool, err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return Userf(nil, "invalid arguments for %s: argument %q is given twice; give each argument once", tool, key)
		}
		seen[key] = true
		if names != nil && !slices.Contains(names, key) {
			return Userf(nil, "invalid arguments for %s: unknown argument %q (names are case-sensitive); %s", tool, key, accepts(names))
		}
		if err := checkValue(dec, tool, depth); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return notJSON(tool, err)
	}
	return nil
}

// checkValue reads one value, checking the objects inside it.
func checkValue(dec *json.Decoder, tool string, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return notJSON(tool, err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth >= maxArgumentDepth {
		return Userf(nil, "invalid arguments for %s: they are nested more than %d levels deep", tool, maxArgumentDepth)
	}
	if d == '{' {
		return checkObject(dec, tool, nil, depth+1)
	}
	for dec.More() { // an array
		if err := checkValue(dec, tool, depth+1); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return notJSON(tool, err)
	}
	return nil
}

// jsonKind names the kind of value a token starts.
func jsonKind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

func notJSON(tool string, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return Userf(err, "invalid arguments for %s: the arguments are not valid JSON; send one JSON object", tool)
}

// accepts says which arguments a tool takes.
func accepts(names []string) string {
	if len(names) == 0 {
		return "it takes no arguments"
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	return "it accepts " + strings.Join(quoted, ", ")
}

// toolArguments are the arguments a call runs with: the tool's own
// decoding where it has one; otherwise the model's JSON, once it is an
// object with no key given twice.
func toolArguments(t Tool, name string, raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	if d, ok := t.(ArgumentDecoder); ok {
		return d.DecodeArguments(raw)
	}
	if err := CheckArgumentKeys(name, raw, nil); err != nil {
		return nil, err
	}
	return raw, nil
}
