package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deskhand/deskhand/server/agent"
)

// Names of the built-in tools, as the model and the agent settings see them.
const (
	NameCurrentTime = "current_time"
	NameReadFile    = "read_file"
	NameListDir     = "list_dir"
	NameWriteFile   = "write_file"
	NameFetchURL    = "fetch_url"
)

// Defaults of [Options].
const (
	DefaultHTTPTimeout   = 30 * time.Second
	DefaultMaxReadBytes  = 1 << 20
	DefaultMaxFetchBytes = 1 << 20
)

// maxListEntries caps what list_dir shows of one folder.
const maxListEntries = 1000

// Options configures the catalog. The zero value is ready to use; no
// option lets fetch_url reach what its guard refuses.
type Options struct {
	// HTTPTimeout bounds one fetch_url request, redirects and body
	// included; 0 (or less) means DefaultHTTPTimeout.
	HTTPTimeout time.Duration
	// Never lists the "host:port" endpoints no agent may reach, named
	// hosts or not: Deskhand's own endpoint and the model and tool servers
	// it uses. It is asked at each connection, so it may change.
	Never func() []string
	// Resolve looks up a host's addresses for fetch_url (nil: the
	// system's resolver); every address is checked before it is dialed.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address the guard approved (nil: a net.Dialer
	// that checks the address again on the socket).
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// Now tells current_time the time; nil means time.Now.
	Now func() time.Time
	// MaxReadBytes is the most read_file returns of a file; 0 (or less)
	// means DefaultMaxReadBytes.
	MaxReadBytes int64
	// MaxFetchBytes is the most fetch_url returns of a body; 0 (or less)
	// means DefaultMaxFetchBytes.
	MaxFetchBytes int64
}

func (o Options) withDefaults() Options {
	if o.HTTPTimeout <= 0 {
		o.HTTPTimeout = DefaultHTTPTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxReadBytes <= 0 {
		o.MaxReadBytes = DefaultMaxReadBytes
	}
	if o.MaxFetchBytes <= 0 {
		o.MaxFetchBytes = DefaultMaxFetchBytes
	}
	return o
}

// Catalog returns the built-in tools, in a fixed order: current_time,
// read_file, list_dir, write_file, fetch_url.
func Catalog(opts Options) []agent.Tool {
	o := opts.withDefaults()
	return []agent.Tool{
		currentTime{now: o.Now},
		readFile{max: o.MaxReadBytes},
		listDir{},
		writeFile{},
		fetchURL{client: fetchClient(o), max: o.MaxFetchBytes},
	}
}

// fetchClient makes fetch_url's requests through the guard: no proxy, no
// kept connections, every connection (redirects' too) checked.
func fetchClient(o Options) *http.Client {
	guard := newNetGuard(o)
	return &http.Client{
		Timeout: o.HTTPTimeout,
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           guard.DialContext,
			DisableKeepAlives:     true,
			ForceAttemptHTTP2:     true,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: o.HTTPTimeout,
		},
	}
}

// decoded returns the arguments as the tool will run them: decoded into
// A, checked (when *A has a check method), and encoded again.
func decoded[A any](tool string, raw json.RawMessage) (json.RawMessage, error) {
	var args A
	if err := decodeArgs(tool, raw, &args); err != nil {
		return nil, err
	}
	if c, ok := any(&args).(interface{ check() error }); ok {
		if err := c.check(); err != nil {
			return nil, err
		}
	}
	return json.Marshal(args)
}

// decodeArgs decodes a tool's JSON arguments into v (a pointer to a
// struct) strictly: keys must match the JSON names exactly (Go alone
// would match "PATH" to "path"), and unknown or repeated keys, wrong
// types and trailing data are refused with a message naming the key.
// Missing or null arguments count as an empty object; the tool checks
// what it requires.
func decodeArgs(tool string, raw json.RawMessage, v any) error {
	data := bytes.TrimSpace(raw)
	if len(data) == 0 || string(data) == "null" {
		data = []byte("{}")
	}
	if err := agent.CheckArgumentKeys(tool, data, fieldNames(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return argError(tool, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return agent.Userf(err, "invalid arguments for %s: unexpected data after the arguments object; send exactly one JSON object", tool)
	}
	return nil
}

func argError(tool string, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return agent.Userf(err, "invalid arguments for %s: the arguments must be a JSON object, not %s", tool, typeErr.Value)
	case errors.As(err, &typeErr):
		return agent.Userf(err, "invalid arguments for %s: argument %q must be %s, not %s", tool, typeErr.Field, kindName(typeErr.Type), typeErr.Value)
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return agent.Userf(err, "invalid arguments for %s: the arguments are not valid JSON; send one JSON object", tool)
	}
	return agent.Userf(err, "invalid arguments for %s", tool)
}

// fieldNames lists the JSON names of the struct v points to.
func fieldNames(v any) []string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	names := []string{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

func kindName(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another type"
}

// required reports a missing or empty string argument.
func required(tool, name, value string) error {
	if value == "" {
		return agent.Userf(nil, "invalid arguments for %s: argument %q is required (a non-empty string)", tool, name)
	}
	return nil
}

// readCapped reads at most max bytes of r, and reports whether there was
// more. The text is cut on a UTF-8 character boundary.
func readCapped(r io.Reader, max int64) (data []byte, cut bool, err error) {
	data, err = io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) <= max {
		return data, false, nil
	}
	end := int(max)
	// Back off to the start of a character split by the cut.
	for i := 0; i < utf8.UTFMax-1 && end > 0 && !utf8.RuneStart(data[end]); i++ {
		end--
	}
	return data[:end], true, nil
}

// asText makes data a valid UTF-8 string.
func asText(data []byte) string {
	return strings.ToValidUTF8(string(data), "\uFFFD")
}
