package connect

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// tomlFormat edits Codex's config.toml: our entry is the table
// [mcp_servers.NAME] with url, http_headers and tool_timeout_sec. The file is edited as text
// (only the lines of our table change, so comments, other tables and line
// endings stay byte-for-byte) and every edit is checked by parsing the result
// and comparing it with the original, minus our entry.
type tomlFormat struct{}

const tomlServers = "mcp_servers"

func (tomlFormat) sizeLimit() int64 { return maxSize }

// checkLimits refuses data too large or too deeply nested to parse.
func (f tomlFormat) checkLimits(path string, data []byte) error {
	if err := checkSize(path, data, f.sizeLimit()); err != nil {
		return err
	}
	return checkTOMLDepth(path, data, maxDepth)
}

// decode parses data, once it is known to be within the limits.
func (f tomlFormat) decode(path string, data []byte) (map[string]any, error) {
	if err := f.checkLimits(path, data); err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := toml.Unmarshal(data, &m); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			err = fmt.Errorf("line %d, column %d: %v", row, col, de)
		}
		return nil, &ParseError{Path: path, Format: "TOML", Err: err}
	}
	if s, ok := m[tomlServers]; ok {
		if _, ok := s.(map[string]any); !ok {
			return nil, &ParseError{Path: path, Format: "TOML", Err: fmt.Errorf("%s is not a table", tomlServers)}
		}
	}
	return m, nil
}

// codexToolTimeout is tool_timeout_sec, in seconds. (startup_timeout_sec,
// the wait for the handshake, is left to Codex: Deskhand answers it at once
// when it runs, and a longer wait would only hold Codex up when it does
// not.)
var codexToolTimeout = int64(CallTimeout.Seconds())

func tomlEntry(e Entry) map[string]any {
	m := map[string]any{"url": e.URL, "tool_timeout_sec": codexToolTimeout}
	if e.Token != "" {
		m["http_headers"] = map[string]any{"Authorization": "Bearer " + e.Token}
	}
	return m
}

// ours returns our entry in a decoded document.
func ours(m map[string]any, name string) (any, bool) {
	s, _ := m[tomlServers].(map[string]any)
	v, ok := s[name]
	return v, ok
}

// without returns m without our entry (and without an mcp_servers table
// left empty by that), for comparing "everything else".
func without(m map[string]any, name string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	if s, ok := m[tomlServers].(map[string]any); ok {
		s2 := make(map[string]any, len(s))
		for k, v := range s {
			if k != name {
				s2[k] = v
			}
		}
		if len(s2) == 0 {
			delete(out, tomlServers)
		} else {
			out[tomlServers] = s2
		}
	}
	return out
}

func (f tomlFormat) set(path string, data []byte, name string, e Entry) ([]byte, bool, error) {
	old, err := f.decode(path, data)
	if err != nil {
		return nil, false, err
	}
	want := tomlEntry(e)
	if got, ok := ours(old, name); ok && reflect.DeepEqual(got, want) {
		return data, true, nil
	}
	doc, err := scanTOML(path, data)
	if err != nil {
		return nil, false, err
	}
	block := tomlBlock(doc.nl, name, e)
	regions := doc.regions(name)
	var out []byte
	if len(regions) > 0 && regions[0].table {
		out = doc.splice(regions, block)
	} else {
		out = doc.splice(regions, "")
		if len(bytes.TrimSpace(out)) > 0 {
			if !bytes.HasSuffix(out, []byte("\n")) {
				out = append(out, doc.nl...)
			}
			if !bytes.HasSuffix(out, []byte(doc.nl+doc.nl)) {
				out = append(out, doc.nl...)
			}
		}
		out = append(out, block...)
	}
	if err := f.verify(path, old, out, name, want); err != nil {
		return nil, false, err
	}
	return out, false, nil
}

func (f tomlFormat) remove(path string, data []byte, name string) ([]byte, bool, error) {
	old, err := f.decode(path, data)
	if err != nil {
		return nil, false, err
	}
	if _, ok := ours(old, name); !ok {
		return nil, false, nil
	}
	doc, err := scanTOML(path, data)
	if err != nil {
		return nil, false, err
	}
	out := doc.splice(doc.regions(name), "")
	if err := f.verify(path, old, out, name, nil); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// verify checks that out parses, holds want as our entry (or no entry when
// want is nil) and is otherwise equal to old.
func (f tomlFormat) verify(path string, old map[string]any, out []byte, name string, want map[string]any) error {
	fail := func(why string) error {
		return fmt.Errorf("connect: %s: cannot edit entry %q safely (%s); file left untouched", path, name, why)
	}
	if err := f.checkLimits(path, out); err != nil {
		return fail(err.Error())
	}
	m := map[string]any{}
	if err := toml.Unmarshal(out, &m); err != nil {
		return fail("the result does not parse: " + err.Error())
	}
	got, ok := ours(m, name)
	if want == nil && ok {
		return fail("the entry is still present")
	}
	if want != nil && (!ok || !reflect.DeepEqual(got, want)) {
		return fail("the entry did not read back")
	}
	if !reflect.DeepEqual(without(old, name), without(m, name)) {
		return fail("other settings would change")
	}
	return nil
}

func (tomlFormat) read(path string, data []byte, name string) (State, bool, error) {
	m, err := tomlFormat{}.decode(path, data)
	if err != nil {
		return State{}, false, err
	}
	v, ok := ours(m, name)
	if !ok {
		return State{}, false, nil
	}
	t, _ := v.(map[string]any)
	var st State
	st.URL, _ = t["url"].(string)
	st.Command, _ = t["command"].(string)
	if h, ok := t["http_headers"].(map[string]any); ok {
		for k, v := range h {
			if s, _ := v.(string); strings.EqualFold(k, "Authorization") && s != "" {
				st.HasToken, st.token = true, bearer(s)
			}
		}
	}
	return st, true, nil
}

func tomlBlock(nl, name string, e Entry) string {
	var b strings.Builder
	b.WriteString("[" + tomlServers + "." + name + "]" + nl)
	b.WriteString("url = " + tomlString(e.URL) + nl)
	if e.Token != "" {
		b.WriteString("http_headers = { Authorization = " + tomlString("Bearer "+e.Token) + " }" + nl)
	}
	b.WriteString("tool_timeout_sec = " + strconv.FormatInt(codexToolTimeout, 10) + nl)
	return b.String()
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlDoc is a TOML document split into lines and top-level expressions.
type tomlDoc struct {
	data  []byte
	nl    string
	lines []int // start offset of each line
	exprs []tomlExpr
}

type tomlExpr struct {
	kind unstable.Kind // Table, ArrayTable or KeyValue
	path []string      // full path (a key-value's includes its table's)
	line int           // first line
	end  int           // one past the last line, trailing blank and comment lines excluded
}

// region is a range of lines [start, end) that belongs to our entry.
type region struct {
	start, end int
	table      bool // a [mcp_servers.NAME…] section rather than a key-value
}

func scanTOML(path string, data []byte) (*tomlDoc, error) {
	if err := (tomlFormat{}).checkLimits(path, data); err != nil {
		return nil, err
	}
	d := &tomlDoc{data: data, nl: "\n", lines: []int{0}}
	if bytes.Contains(data, []byte("\r\n")) {
		d.nl = "\r\n"
	}
	for i, c := range data {
		if c == '\n' && i+1 < len(data) {
			d.lines = append(d.lines, i+1)
		}
	}
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		n := p.Expression()
		if n.Kind != unstable.Table && n.Kind != unstable.ArrayTable && n.Kind != unstable.KeyValue {
			continue
		}
		var key []string
		first := -1
		it := n.Key()
		for it.Next() {
			k := it.Node()
			if first < 0 {
				first = int(k.Raw.Offset)
			}
			key = append(key, string(k.Data))
		}
		x := tomlExpr{kind: n.Kind, line: d.lineOf(first)}
		if n.Kind == unstable.KeyValue {
			x.path = append(append([]string(nil), table...), key...)
		} else {
			table = key
			x.path = key
		}
		d.exprs = append(d.exprs, x)
	}
	if err := p.Error(); err != nil {
		return nil, &ParseError{Path: path, Format: "TOML", Err: err}
	}
	for i := range d.exprs {
		next := len(d.lines)
		if i+1 < len(d.exprs) {
			next = d.exprs[i+1].line
		}
		d.exprs[i].end = d.trim(d.exprs[i].line, next)
	}
	return d, nil
}

func (d *tomlDoc) lineOf(off int) int {
	return sort.Search(len(d.lines), func(i int) bool { return d.lines[i] > off }) - 1
}

func (d *tomlDoc) line(i int) []byte {
	end := len(d.data)
	if i+1 < len(d.lines) {
		end = d.lines[i+1]
	}
	return d.data[d.lines[i]:end]
}

func (d *tomlDoc) blankOrComment(i int) bool {
	l := bytes.TrimSpace(d.line(i))
	return len(l) == 0 || l[0] == '#'
}

// trim moves end back over blank and comment-only lines, keeping start.
func (d *tomlDoc) trim(start, end int) int {
	for end > start+1 && d.blankOrComment(end-1) {
		end--
	}
	return end
}

func hasPrefix(path, prefix []string) bool {
	if len(path) < len(prefix) {
		return false
	}
	for i, p := range prefix {
		if path[i] != p {
			return false
		}
	}
	return true
}

// regions lists the line ranges that hold our entry, in order.
func (d *tomlDoc) regions(name string) []region {
	prefix := []string{tomlServers, name}
	var out []region
	inOurs := false
	for i := 0; i < len(d.exprs); i++ {
		x := d.exprs[i]
		switch x.kind {
		case unstable.Table, unstable.ArrayTable:
			inOurs = hasPrefix(x.path, prefix)
			if !inOurs {
				continue
			}
			r := region{start: x.line, end: x.end, table: true}
			for i+1 < len(d.exprs) && d.exprs[i+1].kind == unstable.KeyValue {
				i++
				r.end = d.exprs[i].end
			}
			out = append(out, r)
		case unstable.KeyValue:
			if !inOurs && hasPrefix(x.path, prefix) {
				out = append(out, region{start: x.line, end: x.end})
			}
		}
	}
	// A table section first, so that our entry keeps its place.
	sort.SliceStable(out, func(i, j int) bool { return out[i].table && !out[j].table })
	return out
}

// splice deletes the regions, putting repl in place of the first one.
func (d *tomlDoc) splice(regions []region, repl string) []byte {
	type cut struct {
		start, end int
		repl       string
	}
	var cuts []cut
	for i, r := range regions {
		c := cut{start: d.lines[r.start], end: len(d.data)}
		if r.end < len(d.lines) {
			c.end = d.lines[r.end]
		}
		if i == 0 {
			c.repl = repl
		}
		if c.repl == "" && r.start > 0 && d.blankOrComment(r.start-1) && len(bytes.TrimSpace(d.line(r.start-1))) == 0 &&
			(r.end >= len(d.lines) || len(bytes.TrimSpace(d.line(r.end))) == 0) {
			c.start = d.lines[r.start-1] // drop one of the two blank lines around it
		}
		cuts = append(cuts, c)
	}
	sort.Slice(cuts, func(i, j int) bool { return cuts[i].start < cuts[j].start })
	var out []byte
	pos := 0
	for _, c := range cuts {
		if c.start < pos {
			c.start = pos
		}
		out = append(out, d.data[pos:c.start]...)
		out = append(out, c.repl...)
		pos = max(pos, c.end)
	}
	return append(out, d.data[pos:]...)
}
