package connect

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/tailscale/hujson"
)

// shape is how a client spells our entry.
type shape int

const (
	shapeCursor    shape = iota // {url, headers}
	shapeTypedHTTP              // {type:"http", url, headers}
	shapeWindsurf               // {serverUrl, headers}
	shapeStdio                  // {command, args}
	shapeGemini                 // {httpUrl, headers, timeout (ms)}
	shapeOpenCode               // {type:"remote", url, headers, enabled, oauth:false}
	shapeZed                    // {url, headers, timeout (s)}
)

// jsonEntry is our entry in every JSON dialect; field order is write order.
type jsonEntry struct {
	Type      string            `json:"type,omitempty"`
	URL       string            `json:"url,omitempty"`
	ServerURL string            `json:"serverUrl,omitempty"`
	HTTPURL   string            `json:"httpUrl,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Timeout   int64             `json:"timeout,omitempty"`
	Enabled   *bool             `json:"enabled,omitempty"`
	OAuth     *bool             `json:"oauth,omitempty"`
}

func (s shape) entry(e Entry) jsonEntry {
	var je jsonEntry
	if s == shapeStdio {
		je.Command = e.Command
		je.Args = append([]string{}, e.args()...)
		return je
	}
	if e.Token != "" {
		je.Headers = map[string]string{"Authorization": "Bearer " + e.Token}
	}
	switch s {
	case shapeTypedHTTP:
		je.Type, je.URL = "http", e.URL
	case shapeWindsurf:
		je.ServerURL = e.URL
	case shapeGemini:
		je.HTTPURL, je.Timeout = e.URL, CallTimeout.Milliseconds()
	case shapeOpenCode:
		yes, no := true, false
		je.Type, je.URL, je.Enabled, je.OAuth = "remote", e.URL, &yes, &no
	case shapeZed:
		je.URL, je.Timeout = e.URL, int64(CallTimeout.Seconds())
	default:
		je.URL = e.URL
	}
	return je
}

// jsonFormat edits a JSON (or, with jsonc, JSON with comments and trailing
// commas) file whose top-level object holds servers under key.
type jsonFormat struct {
	key     string
	shape   shape
	jsonc   bool
	maxSize int64 // the largest file read; maxSize when zero
}

func (f jsonFormat) sizeLimit() int64 {
	if f.maxSize > 0 {
		return f.maxSize
	}
	return maxSize
}

func (f jsonFormat) name() string {
	if f.jsonc {
		return "JSONC"
	}
	return "JSON"
}

// parse parses data strictly, once it is known to be within the limits.
// An empty (or blank) file counts as {}.
func (f jsonFormat) parse(path string, data []byte) (hujson.Value, error) {
	if err := checkSize(path, data, f.sizeLimit()); err != nil {
		return hujson.Value{}, err
	}
	if err := checkJSONDepth(path, data, maxDepth); err != nil {
		return hujson.Value{}, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		v, _ := hujson.Parse([]byte("{}"))
		return v, nil
	}
	if !f.jsonc {
		var x any
		if err := json.Unmarshal(data, &x); err != nil {
			return hujson.Value{}, &ParseError{Path: path, Format: f.name(), Err: err}
		}
	}
	v, err := hujson.Parse(data)
	if err != nil {
		return hujson.Value{}, &ParseError{Path: path, Format: f.name(), Err: err}
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return hujson.Value{}, &ParseError{Path: path, Format: f.name(), Err: fmt.Errorf("the top level is not an object")}
	}
	return v, nil
}

// servers returns the servers object (nil when absent) and its member in root.
func (f jsonFormat) servers(path string, root *hujson.Object) (*hujson.Object, *hujson.ObjectMember, error) {
	i := memberIndex(root, f.key)
	if i < 0 {
		return nil, nil, nil
	}
	m := &root.Members[i]
	obj, ok := m.Value.Value.(*hujson.Object)
	if !ok {
		return nil, nil, &ParseError{Path: path, Format: f.name(), Err: fmt.Errorf("%q is not an object", f.key)}
	}
	return obj, m, nil
}

// memberIndex returns the index of the last member named name (the one JSON
// decoders honour), or -1.
func memberIndex(obj *hujson.Object, name string) int {
	idx := -1
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == name {
			idx = i
		}
	}
	return idx
}

func (f jsonFormat) set(path string, data []byte, name string, e Entry) ([]byte, bool, error) {
	v, err := f.parse(path, data)
	if err != nil {
		return nil, false, err
	}
	want := f.shape.entry(e)
	root := v.Value.(*hujson.Object)
	st := newStyle(data, root)
	servers, sm, err := f.servers(path, root)
	if err != nil {
		return nil, false, err
	}
	if servers == nil {
		// Add "key": {"name": entry} to the top level.
		val, err := st.render(map[string]jsonEntry{name: want}, st.childIndent(root, ""))
		if err != nil {
			return nil, false, err
		}
		st.appendMember(root, f.key, val, "")
		out := v.Pack()
		if len(bytes.TrimSpace(data)) == 0 {
			out = append(out, st.nl...)
		}
		return out, false, nil
	}
	memberIndent := st.childIndent(servers, st.indentOf(root, sm))
	if i := memberIndex(servers, name); i >= 0 {
		m := &servers.Members[i]
		if sameJSON(m.Value.Value, want) {
			return data, true, nil
		}
		val, err := st.render(want, memberIndent)
		if err != nil {
			return nil, false, err
		}
		m.Value.Value = val.Value
		return v.Pack(), false, nil
	}
	val, err := st.render(want, memberIndent)
	if err != nil {
		return nil, false, err
	}
	st.appendMember(servers, name, val, st.indentOf(root, sm))
	return v.Pack(), false, nil
}

func (f jsonFormat) remove(path string, data []byte, name string) ([]byte, bool, error) {
	v, err := f.parse(path, data)
	if err != nil {
		return nil, false, err
	}
	servers, _, err := f.servers(path, v.Value.(*hujson.Object))
	if err != nil || servers == nil {
		return nil, false, err
	}
	i := memberIndex(servers, name)
	if i < 0 {
		return nil, false, nil
	}
	for ; i >= 0; i = memberIndex(servers, name) {
		last := i == len(servers.Members)-1
		trailing := servers.Members[i].Value.AfterExtra != nil
		servers.Members = append(servers.Members[:i], servers.Members[i+1:]...)
		if last && trailing && len(servers.Members) > 0 {
			// Keep the trailing-comma style of the list.
			if p := &servers.Members[len(servers.Members)-1].Value; p.AfterExtra == nil {
				p.AfterExtra = hujson.Extra{}
			}
		}
	}
	if len(servers.Members) == 0 && !bytes.ContainsAny(servers.AfterExtra, "/") {
		servers.AfterExtra = nil // "{}" rather than a brace on its own line
	}
	return v.Pack(), true, nil
}

func (f jsonFormat) read(path string, data []byte, name string) (State, bool, error) {
	v, err := f.parse(path, data)
	if err != nil {
		return State{}, false, err
	}
	servers, _, err := f.servers(path, v.Value.(*hujson.Object))
	if err != nil || servers == nil {
		return State{}, false, err
	}
	i := memberIndex(servers, name)
	if i < 0 {
		return State{}, false, nil
	}
	// Only the fields Status reports are read, so that a field the client
	// spells its own way (opencode's oauth object, a command array) is no
	// error.
	var je struct {
		URL       string            `json:"url"`
		ServerURL string            `json:"serverUrl"`
		HTTPURL   string            `json:"httpUrl"`
		Headers   map[string]string `json:"headers"`
		Command   string            `json:"command"`
		Args      []string          `json:"args"`
	}
	raw, err := hujson.Standardize(servers.Members[i].Value.Pack())
	if err == nil {
		err = json.Unmarshal(raw, &je)
	}
	if err != nil {
		return State{}, true, fmt.Errorf("connect: %s: entry %q has an unexpected shape: %v", path, name, err)
	}
	st := State{URL: cmp.Or(je.HTTPURL, je.ServerURL, je.URL), Command: je.Command, Args: je.Args}
	for k, h := range je.Headers {
		if strings.EqualFold(k, "Authorization") && h != "" {
			st.HasToken, st.token = true, bearer(h)
		}
	}
	return st, true, nil
}

// sameJSON reports whether the existing value v is exactly want.
func sameJSON(v hujson.ValueTrimmed, want jsonEntry) bool {
	raw, err := hujson.Standardize(hujson.Value{Value: v}.Pack())
	if err != nil {
		return false
	}
	var got, exp any
	if json.Unmarshal(raw, &got) != nil {
		return false
	}
	b, _ := json.Marshal(want)
	if json.Unmarshal(b, &exp) != nil {
		return false
	}
	return reflect.DeepEqual(got, exp)
}

// style is the layout of an existing document, copied by inserted values.
type style struct {
	nl      string // "\n" or "\r\n"
	unit    string // one level of indentation
	compact bool   // the document is on one line
}

func newStyle(data []byte, root *hujson.Object) style {
	st := style{nl: "\n", unit: "  "}
	if bytes.Contains(data, []byte("\r\n")) {
		st.nl = "\r\n"
	}
	if len(root.Members) > 0 {
		if ind, ok := lastLineIndent(root.Members[0].Name.BeforeExtra); ok {
			if ind != "" {
				st.unit = ind
			}
		} else {
			st.compact = true
		}
	}
	return st
}

// lastLineIndent returns the whitespace after the last newline of x.
func lastLineIndent(x hujson.Extra) (string, bool) {
	i := bytes.LastIndexByte(x, '\n')
	if i < 0 {
		return "", false
	}
	rest := string(x[i+1:])
	return rest[:len(rest)-len(strings.TrimLeft(rest, " \t"))], true
}

// indentOf returns the indentation of member m of root.
func (st style) indentOf(root *hujson.Object, m *hujson.ObjectMember) string {
	if ind, ok := lastLineIndent(m.Name.BeforeExtra); ok {
		return ind
	}
	return ""
}

// childIndent is the indentation of obj's members, obj being at indent parent.
func (st style) childIndent(obj *hujson.Object, parent string) string {
	if len(obj.Members) > 0 {
		if ind, ok := lastLineIndent(obj.Members[0].Name.BeforeExtra); ok {
			return ind
		}
	}
	return parent + st.unit
}

// render encodes x as a value starting at a line indented by indent.
func (st style) render(x any, indent string) (hujson.Value, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if !st.compact {
		enc.SetIndent(indent, st.unit)
	}
	if err := enc.Encode(x); err != nil {
		return hujson.Value{}, err
	}
	b := bytes.TrimRight(buf.Bytes(), "\n")
	if st.nl != "\n" {
		b = bytes.ReplaceAll(b, []byte("\n"), []byte(st.nl))
	}
	return hujson.Parse(b)
}

// appendMember adds "name": val as the last member of obj, whose own line
// is indented by parent (members one unit deeper), copying the layout and
// trailing-comma style of the existing members.
func (st style) appendMember(obj *hujson.Object, name string, val hujson.Value, parent string) {
	sep := " "
	before := st.nl + st.childIndent(obj, parent)
	if st.compact {
		sep, before = "", ""
	}
	trailing := false
	if n := len(obj.Members); n > 0 {
		last := &obj.Members[n-1]
		trailing = last.Value.AfterExtra != nil
		if len(obj.Members[0].Name.BeforeExtra) > 0 && !st.compact {
			if ind, ok := lastLineIndent(last.Name.BeforeExtra); ok {
				before = st.nl + ind
			}
		}
		// Keep the old last member's spacing before the comma it now needs.
		if trailing && len(bytes.TrimSpace(last.Value.AfterExtra)) == 0 {
			last.Value.AfterExtra = hujson.Extra{}
		}
	} else if !st.compact && !bytes.Contains(obj.AfterExtra, []byte("\n")) {
		obj.AfterExtra = hujson.Extra(st.nl + parent)
	}
	m := hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: hujson.Extra(before), Value: hujson.String(name)},
		Value: hujson.Value{BeforeExtra: hujson.Extra(sep), Value: val.Value},
	}
	if trailing {
		m.Value.AfterExtra = hujson.Extra{}
	}
	obj.Members = append(obj.Members, m)
}
