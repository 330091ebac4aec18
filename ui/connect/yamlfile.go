package connect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// yamlFormat edits Goose's config.yaml: our entry is extensions.NAME, a
// streamable_http extension. Like tomlFormat, the file is edited as text
// (yaml.v3's node API only says where things are): only the lines of our
// entry change, so comments, key order, blank lines and line endings stay
// byte-for-byte, and every edit is checked by parsing the result and
// comparing it with the original, minus our entry.
type yamlFormat struct{}

const yamlServers = "extensions"

// errUnsafeEdit is a YAML edit refused because Deskhand cannot make it by
// changing only our entry's lines (a flow-style file, say, which Goose
// never writes).
var errUnsafeEdit = errors.New("cannot safely edit")

// gooseDescription is the description Goose shows for our extension.
const gooseDescription = "Deskhand's agents"

func (yamlFormat) sizeLimit() int64 { return maxSize }

// yamlDoc is a parsed document: its root mapping and the value decoded.
type yamlDoc struct {
	root  *yaml.Node // the top-level mapping; nil for an empty file
	value map[string]any
}

// parse parses data strictly: one document whose top level is a mapping
// (or nothing at all), with extensions, when present, a mapping or null.
func (yamlFormat) parse(path string, data []byte) (yamlDoc, error) {
	if err := checkSize(path, data, maxSize); err != nil {
		return yamlDoc{}, err
	}
	if err := checkYAMLDepth(path, data, maxDepth); err != nil {
		return yamlDoc{}, err
	}
	fail := func(err error) (yamlDoc, error) {
		return yamlDoc{}, &ParseError{Path: path, Format: "YAML", Err: err}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return yamlDoc{value: map[string]any{}}, nil
	} else if err != nil {
		return fail(yamlError(err))
	}
	var second yaml.Node
	if err := dec.Decode(&second); !errors.Is(err, io.EOF) {
		if err != nil {
			return fail(yamlError(err))
		}
		return fail(fmt.Errorf("line %d: a second document; Goose reads one", second.Line))
	}
	if len(doc.Content) == 0 || (doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Tag == "!!null") {
		return yamlDoc{value: map[string]any{}}, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fail(fmt.Errorf("line %d: the top level is not a mapping", root.Line))
	}
	m := map[string]any{}
	if err := doc.Decode(&m); err != nil {
		return fail(yamlError(err))
	}
	if v, ok := m[yamlServers]; ok && v != nil {
		if _, ok := v.(map[string]any); !ok {
			return fail(fmt.Errorf("%q is not a mapping", yamlServers))
		}
	}
	return yamlDoc{root: root, value: m}, nil
}

// yamlError is yaml.v3's error ("yaml: line N: …") without its prefix.
func yamlError(err error) error {
	return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
}

// member returns the key and value nodes of key in mapping m.
func member(m *yaml.Node, key string) (k, v *yaml.Node, i int) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil, -1
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1], i
		}
	}
	return nil, nil, -1
}

// gooseEntry is our entry as Goose reads it (see yamlBlock).
func gooseEntry(name string, e Entry) map[string]any {
	m := map[string]any{
		"enabled": true, "type": "streamable_http", "name": name, "description": gooseDescription,
		"uri": e.URL, "envs": map[string]any{}, "env_keys": []any{}, "available_tools": []any{},
		"timeout": int(CallTimeout.Seconds()),
	}
	if e.Token != "" {
		m["headers"] = map[string]any{"Authorization": "Bearer " + e.Token}
	}
	return m
}

// yamlBlock is our entry's lines, the key indented by indent and its fields
// one unit deeper.
func yamlBlock(nl, indent, unit, name string, e Entry) string {
	var b strings.Builder
	line := func(depth int, s string) {
		b.WriteString(indent + strings.Repeat(unit, depth) + s + nl)
	}
	line(0, name+":")
	line(1, "enabled: true")
	line(1, "type: streamable_http")
	line(1, "name: "+yamlString(name))
	line(1, "description: "+yamlString(gooseDescription))
	line(1, "uri: "+yamlString(e.URL))
	if e.Token != "" {
		line(1, "headers:")
		line(2, "Authorization: "+yamlString("Bearer "+e.Token))
	}
	line(1, "envs: {}")
	line(1, "env_keys: []")
	line(1, "timeout: "+strconv.Itoa(int(CallTimeout.Seconds())))
	line(1, "available_tools: []")
	return b.String()
}

// yamlString quotes s as a YAML double-quoted scalar (JSON's escapes are
// YAML's).
func yamlString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimRight(buf.String(), "\n")
}

// yamlText is data split into lines, each with its line ending.
type yamlText struct {
	lines []string
	nl    string
}

func splitYAML(data []byte) yamlText {
	t := yamlText{nl: "\n"}
	if bytes.Contains(data, []byte("\r\n")) {
		t.nl = "\r\n"
	}
	for _, l := range yamlLines(data) {
		t.lines = append(t.lines, string(l))
	}
	return t
}

// yamlLines splits data into lines, each with its line break, which YAML
// (and yaml.v3's line numbers) take to be "\r\n", "\n" or a lone "\r".
func yamlLines(data []byte) [][]byte {
	var lines [][]byte
	for len(data) > 0 {
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			lines = append(lines, data)
			break
		}
		n := i + 1
		if data[i] == '\r' && n < len(data) && data[n] == '\n' {
			n++
		}
		lines = append(lines, data[:n])
		data = data[n:]
	}
	return lines
}

// end returns the line (0-based) where the block starting at line start
// (0-based) ends: the line of the next key after it, given as next (1-based,
// 0 for the end of the file), with the blank and comment lines before that
// key left to it.
func (t yamlText) end(start, next int) int {
	end := len(t.lines)
	if next > 0 {
		end = next - 1
	}
	for end > start+1 {
		l := strings.TrimSpace(t.lines[end-1])
		if l != "" && !strings.HasPrefix(l, "#") {
			break
		}
		end--
	}
	return end
}

// nextKeyLine is the line of the key after key node k in mapping m, or of
// the key after m's own key in its parent (the root); 0 when none follows.
func nextKeyLine(m *yaml.Node, i int, root *yaml.Node, rootIdx int) int {
	if m != nil && i >= 0 && i+2 < len(m.Content) {
		return m.Content[i+2].Line
	}
	if root != nil && rootIdx >= 0 && rootIdx+2 < len(root.Content) {
		return root.Content[rootIdx+2].Line
	}
	return 0
}

// block reports whether n is a block mapping with at least one member.
func blockMapping(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle == 0 && len(n.Content) > 0
}

// splice returns the text with our entry set to e (or removed, for a nil e).
func (f yamlFormat) splice(path string, data []byte, doc yamlDoc, name string, e *Entry) ([]byte, error) {
	t := splitYAML(data)
	refuse := func(why string) ([]byte, error) {
		return nil, fmt.Errorf("connect: %s: %w extension %q (%s); file left untouched: edit it by hand", path, errUnsafeEdit, name, why)
	}
	ek, ev, ei := member(doc.root, yamlServers)
	var out []string
	switch {
	case ev != nil && blockMapping(ev):
		indent := strings.Repeat(" ", ev.Content[0].Column-1)
		unit := "  "
		if ek.Column == 1 && len(indent) > 0 {
			unit = indent
		}
		k, _, i := member(ev, name)
		if k != nil {
			start := k.Line - 1
			if k.Column-1 != len(indent) || strings.TrimSpace(t.lines[start][:k.Column-1]) != "" {
				return refuse("its key does not start a line")
			}
			end := t.end(start, nextKeyLine(ev, i, doc.root, ei))
			out = append(out, t.lines[:start]...)
			if e != nil {
				out = append(out, yamlBlock(t.nl, indent, unit, name, *e))
			} else if len(ev.Content) == 2 {
				// The last extension: leave "extensions: {}", not null, which
				// Goose would refuse.
				return f.emptyExtensions(t, ek, start, end, refuse)
			}
			out = append(out, t.lines[end:]...)
			break
		}
		if e == nil {
			return data, nil
		}
		last := ev.Content[len(ev.Content)-2]
		end := t.end(last.Line-1, nextKeyLine(nil, -1, doc.root, ei))
		out = append(out, t.lines[:end]...)
		if end > 0 && !strings.HasSuffix(out[len(out)-1], "\n") && !strings.HasSuffix(out[len(out)-1], "\r") {
			out[len(out)-1] += t.nl
		}
		out = append(out, yamlBlock(t.nl, indent, unit, name, *e))
		out = append(out, t.lines[end:]...)
	case e == nil:
		return data, nil
	case ev != nil:
		// extensions: {} or extensions: (null), on the key's own line.
		empty := (ev.Kind == yaml.MappingNode && len(ev.Content) == 0) || (ev.Kind == yaml.ScalarNode && ev.Tag == "!!null")
		if !empty || ev.Line != ek.Line || ek.Column != 1 {
			return refuse(fmt.Sprintf("%q is not written as an indented block", yamlServers))
		}
		start := ek.Line - 1
		end := t.end(start, nextKeyLine(nil, -1, doc.root, ei))
		out = append(out, t.lines[:start]...)
		out = append(out, yamlServers+":"+t.nl, yamlBlock(t.nl, "  ", "  ", name, *e))
		out = append(out, t.lines[end:]...)
	default:
		out = append(out, t.lines...)
		if n := len(out); n > 0 && !strings.HasSuffix(out[n-1], "\n") && !strings.HasSuffix(out[n-1], "\r") {
			out[n-1] += t.nl
		}
		if doc.root != nil && doc.root.Style&yaml.FlowStyle != 0 {
			return refuse("the file is one flow mapping")
		}
		out = append(out, yamlServers+":"+t.nl, yamlBlock(t.nl, "  ", "  ", name, *e))
	}
	return []byte(strings.Join(out, "")), nil
}

// emptyExtensions removes lines [start, end) (the last extension) and
// makes the extensions key's line say "extensions: {}", its comment kept.
func (yamlFormat) emptyExtensions(t yamlText, ek *yaml.Node, start, end int, refuse func(string) ([]byte, error)) ([]byte, error) {
	kl := ek.Line - 1
	m := yamlKeyLineRE.FindStringSubmatchIndex(t.lines[kl])
	if m == nil {
		return refuse(fmt.Sprintf("the %q line holds more than its key", yamlServers))
	}
	line := t.lines[kl]
	var out []string
	out = append(out, t.lines[:kl]...)
	out = append(out, line[:m[3]]+" {}"+line[m[3]:])
	out = append(out, t.lines[kl+1:start]...)
	out = append(out, t.lines[end:]...)
	return []byte(strings.Join(out, "")), nil
}

// yamlKeyLineRE is a line holding the extensions key and nothing after its
// colon but spaces, a comment and the line break; group 1 ends at the colon.
var yamlKeyLineRE = regexp.MustCompile(`^(.*?\b` + yamlServers + `[ \t]*:)[ \t]*(#.*)?[\r\n]*$`)

func yamlOurs(m map[string]any, name string) (any, bool) {
	s, _ := m[yamlServers].(map[string]any)
	v, ok := s[name]
	return v, ok
}

// yamlWithout is m without our entry, extensions left empty or null counting
// as absent.
func yamlWithout(m map[string]any, name string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	s, _ := m[yamlServers].(map[string]any)
	s2 := make(map[string]any, len(s))
	for k, v := range s {
		if k != name {
			s2[k] = v
		}
	}
	if len(s2) == 0 {
		delete(out, yamlServers)
	} else {
		out[yamlServers] = s2
	}
	return out
}

func (f yamlFormat) set(path string, data []byte, name string, e Entry) ([]byte, bool, error) {
	doc, err := f.parse(path, data)
	if err != nil {
		return nil, false, err
	}
	want := gooseEntry(name, e)
	if got, ok := yamlOurs(doc.value, name); ok && reflect.DeepEqual(got, want) {
		return data, true, nil
	}
	out, err := f.splice(path, data, doc, name, &e)
	if err != nil {
		return nil, false, err
	}
	if err := f.verify(path, doc.value, out, name, want); err != nil {
		return nil, false, err
	}
	return out, false, nil
}

func (f yamlFormat) remove(path string, data []byte, name string) ([]byte, bool, error) {
	doc, err := f.parse(path, data)
	if err != nil {
		return nil, false, err
	}
	if _, ok := yamlOurs(doc.value, name); !ok {
		return nil, false, nil
	}
	out, err := f.splice(path, data, doc, name, nil)
	if err != nil {
		return nil, false, err
	}
	if err := f.verify(path, doc.value, out, name, nil); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// verify checks that out parses, holds want as our entry (or no entry when
// want is nil) and is otherwise equal to old.
func (f yamlFormat) verify(path string, old map[string]any, out []byte, name string, want map[string]any) error {
	fail := func(why string) error {
		return fmt.Errorf("connect: %s: %w extension %q (%s); file left untouched: edit it by hand", path, errUnsafeEdit, name, why)
	}
	doc, err := f.parse(path, out)
	if err != nil {
		return fail("the result does not parse: " + err.Error())
	}
	got, ok := yamlOurs(doc.value, name)
	if want == nil && ok {
		return fail("the entry is still present")
	}
	if want != nil && (!ok || !reflect.DeepEqual(got, want)) {
		return fail("the entry did not read back")
	}
	if !reflect.DeepEqual(yamlWithout(old, name), yamlWithout(doc.value, name)) {
		return fail("other settings would change")
	}
	if _, was := old[yamlServers].(map[string]any); was {
		if _, is := doc.value[yamlServers].(map[string]any); !is {
			return fail(fmt.Sprintf("%q would be left null, which Goose refuses", yamlServers))
		}
	}
	return nil
}

func (f yamlFormat) read(path string, data []byte, name string) (State, bool, error) {
	doc, err := f.parse(path, data)
	if err != nil {
		return State{}, false, err
	}
	v, ok := yamlOurs(doc.value, name)
	if !ok {
		return State{}, false, nil
	}
	t, _ := v.(map[string]any)
	var st State
	st.URL, _ = t["uri"].(string)
	st.Command, _ = t["cmd"].(string)
	if h, ok := t["headers"].(map[string]any); ok {
		for k, v := range h {
			if s, _ := v.(string); strings.EqualFold(k, "Authorization") && s != "" {
				st.HasToken, st.token = true, bearer(s)
			}
		}
	}
	return st, true, nil
}
