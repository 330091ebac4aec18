package connect

import (
	"bytes"
	"fmt"

	"github.com/pelletier/go-toml/v2/unstable"
)

// Limits on what Deskhand reads of a client's file, checked before any
// parser sees it: the JSON, JSONC and TOML parsers recurse once per level
// of nesting, so a file of a few megabytes of "[[[[…" would otherwise
// overflow the stack and kill the process.
const (
	// maxDepth is how deeply objects, arrays, tables and dotted keys may
	// nest. Real configuration files stay under 10 levels.
	maxDepth = 256
	// maxSize is the largest file read, for every client but Claude Code.
	maxSize = 8 << 20
	// maxSizeClaudeCode is the largest ~/.claude.json read: Claude Code
	// keeps its project history there, and files of 100 MB have been
	// reported (anthropics/claude-code#6394).
	maxSizeClaudeCode = 256 << 20
)

// LimitError reports a configuration file too large or too deeply nested
// to parse safely; the file is never modified when this error is returned.
type LimitError struct {
	Path  string
	Size  int64 // the file's size, when it is too large
	Limit int64 // the limit exceeded: bytes, or levels of nesting
	Line  int   // where the nesting went past the limit, when too deep
}

func (e *LimitError) Error() string {
	const todo = "Deskhand left it untouched: fix or move the file and run again"
	if e.Line > 0 {
		return fmt.Sprintf("%s is nested more than %d levels deep (at line %d), more than Deskhand reads; %s", e.Path, e.Limit, e.Line, todo)
	}
	return fmt.Sprintf("%s is %s, more than the %s Deskhand reads; %s", e.Path, sizeText(e.Size), sizeText(e.Limit), todo)
}

// TooDeep reports whether the file is too deeply nested (else too large).
func (e *LimitError) TooDeep() bool { return e.Line > 0 }

func sizeText(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// checkSize refuses data larger than limit.
func checkSize(path string, data []byte, limit int64) error {
	if int64(len(data)) > limit {
		return &LimitError{Path: path, Size: int64(len(data)), Limit: limit}
	}
	return nil
}

// checkJSONDepth refuses JSON or JSONC whose objects and arrays nest more
// than limit (maxDepth) deep. Brackets in strings and comments do not
// count. It does not judge the syntax: the parser that runs next reports
// that, and it stops at the first error, before any nesting the scan did
// not see.
func checkJSONDepth(path string, data []byte, limit int) error {
	depth, line := 0, 1
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '\n':
			line++
		case '"':
			i, line = skipString(data, i+1, line, '"', true)
		case '/':
			if i+1 < len(data) && data[i+1] == '/' {
				i = skipLine(data, i)
			} else if i+1 < len(data) && data[i+1] == '*' {
				end := bytes.Index(data[i+2:], []byte("*/"))
				if end < 0 {
					return nil // unclosed comment: the parser refuses it
				}
				line += bytes.Count(data[i:i+2+end], []byte("\n"))
				i += 2 + end + 1
			}
		case '[', '{':
			if depth++; depth > limit {
				return &LimitError{Path: path, Limit: int64(limit), Line: line}
			}
		case ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return nil
}

// skipString returns the index of the quote that closes the one-line
// string starting at i (or of the line break that ends it early), and the
// line number there.
func skipString(data []byte, i, line int, quote byte, escapes bool) (int, int) {
	for ; i < len(data); i++ {
		switch c := data[i]; {
		case c == quote:
			return i, line
		case c == '\n':
			return i - 1, line // the '\n' is scanned again, outside the string
		case c == '\\' && escapes:
			if i+1 < len(data) && data[i+1] == '\n' {
				return i, line
			}
			i++
		}
	}
	return i, line
}

// skipLine returns the index just before the line break after i.
func skipLine(data []byte, i int) int {
	if n := bytes.IndexByte(data[i:], '\n'); n >= 0 {
		return i + n - 1
	}
	return len(data)
}

// checkTOMLDepth refuses TOML that nests more than limit (maxDepth) deep,
// counting arrays, inline tables and every part of a dotted key or table
// header (the decoder recurses on each). Brackets in strings and comments
// do not count.
func checkTOMLDepth(path string, data []byte, limit int) error {
	if err := checkTOMLBrackets(path, data, limit); err != nil {
		return err
	}
	// The brackets are bounded, so the parser's recursion is too; what is
	// left to count is the dotted keys, which it reads without recursing.
	var p unstable.Parser
	p.Reset(data)
	table := 0
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyParts(n)
			if table > limit {
				return &LimitError{Path: path, Limit: int64(limit), Line: lineAt(data, n)}
			}
		case unstable.KeyValue:
			if table+tomlValueDepth(n) > limit {
				return &LimitError{Path: path, Limit: int64(limit), Line: lineAt(data, n)}
			}
		}
	}
	return nil // a syntax error is reported by the decoder
}

// keyParts counts the parts of n's key.
func keyParts(n *unstable.Node) int {
	parts := 0
	for it := n.Key(); it.Next(); {
		parts++
	}
	return parts
}

// tomlValueDepth is the nesting of a key-value node: its key's parts plus
// the nesting of its value.
func tomlValueDepth(n *unstable.Node) int {
	d := 0
	if n.Kind == unstable.KeyValue {
		d = keyParts(n)
		n = n.Value()
	}
	switch n.Kind {
	case unstable.Array, unstable.InlineTable:
		deepest := 0
		for it := n.Children(); it.Next(); {
			deepest = max(deepest, tomlValueDepth(it.Node()))
		}
		d += 1 + deepest
	}
	return d
}

// lineAt is the line of n's key in data.
func lineAt(data []byte, n *unstable.Node) int {
	it := n.Key()
	if !it.Next() {
		return 1
	}
	off := min(int(it.Node().Raw.Offset), len(data))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// checkTOMLBrackets refuses TOML whose arrays and inline tables (and
// table headers) nest more than limit deep, skipping strings and
// comments as the TOML parser reads them.
func checkTOMLBrackets(path string, data []byte, limit int) error {
	depth, line := 0, 1
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '\n':
			line++
		case '#':
			i = skipLine(data, i)
		case '"', '\'':
			if bytes.HasPrefix(data[i:], []byte{c, c, c}) {
				i, line = skipMultiline(data, i+3, line, c)
			} else {
				i, line = skipString(data, i+1, line, c, c == '"')
			}
		case '[', '{':
			if depth++; depth > limit {
				return &LimitError{Path: path, Limit: int64(limit), Line: line}
			}
		case ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return nil
}

// skipMultiline returns the index of the last quote that closes the
// multi-line string whose body starts at i (quote is a double quote for
// a basic string, a single one for a literal string; the three closing
// quotes may follow up to two quotes of the body), and the line number
// there.
func skipMultiline(data []byte, i, line int, quote byte) (int, int) {
	delim := []byte{quote, quote, quote}
	for ; i < len(data); i++ {
		switch c := data[i]; {
		case c == '\n':
			line++
		case c == '\\' && quote == '"':
			if i+1 < len(data) && data[i+1] == '\n' {
				line++
			}
			i++
		case bytes.HasPrefix(data[i:], delim):
			end := i + 2
			for extra := 0; extra < 2 && end+1 < len(data) && data[end+1] == quote; extra++ {
				end++
			}
			return end, line
		}
	}
	return i, line
}

// checkYAMLDepth refuses YAML that nests more than limit (maxDepth) deep:
// flow collections ('[' and '{' outside quotes and comments) plus block
// levels (each deeper indentation, and each "- " of a compact sequence
// such as "- - - x"). Like the other checks it does not judge the syntax,
// and it may count a deeply indented block scalar as nesting: such a file
// is refused, never misread.
func checkYAMLDepth(path string, data []byte, limit int) error {
	var stack []int // the columns of the open block levels
	flow := 0
	for i, text := range yamlLines(data) {
		line := i + 1
		text = bytes.TrimRight(text, "\r\n")
		col := len(text) - len(bytes.TrimLeft(text, " "))
		body := bytes.TrimRight(text[col:], " \t\r")
		if flow == 0 && len(body) > 0 && body[0] != '#' {
			for len(stack) > 0 && stack[len(stack)-1] >= col {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, col)
			for (bytes.HasPrefix(body, []byte("- ")) || bytes.HasPrefix(body, []byte("? "))) && len(stack) <= limit {
				n := len(body) - len(bytes.TrimLeft(body[1:], " ")) // "-" and its spaces
				col += n
				body = body[n:]
				stack = append(stack, col)
			}
		}
		if len(stack) > limit {
			return &LimitError{Path: path, Limit: int64(limit), Line: line}
		}
		for i := 0; i < len(body); i++ {
			switch c := body[i]; c {
			case '#':
				if i == 0 || body[i-1] == ' ' || body[i-1] == '\t' {
					i = len(body)
				}
			case '"', '\'':
				if i == 0 || bytes.IndexByte([]byte(" \t[{,:"), body[i-1]) >= 0 {
					i, _ = skipString(body, i+1, line, c, c == '"')
				}
			case '[', '{':
				if flow++; flow+len(stack) > limit {
					return &LimitError{Path: path, Limit: int64(limit), Line: line}
				}
			case ']', '}':
				flow = max(flow-1, 0)
			}
		}
	}
	return nil
}
