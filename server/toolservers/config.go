package toolservers

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
)

// Config is one of the person's MCP servers: either a command Deskhand
// runs (stdio) or a Streamable HTTP URL. Secrets in Env and Headers are
// already resolved; they are never logged nor shown ([Config.LogValue]).
type Config struct {
	// Name identifies the server and prefixes its tools' names: letters,
	// digits, '_' and '-', unique among the servers.
	Name string

	// Command, with Args, Env (added to Deskhand's environment) and Dir
	// (the working folder; empty: Deskhand's), runs a stdio server.
	Command string
	Args    []string
	Env     map[string]string
	Dir     string

	// URL is a Streamable HTTP server's endpoint (http or https); Headers
	// go with every request (e.g. Authorization).
	URL     string
	Headers map[string]string

	// AllowSampling lets the server ask for the agent's model
	// (sampling/createMessage): off unless the person turns it on, since
	// it spends their model. Sampling is declared to the server only when
	// this is on and [Options.Sample] is set.
	AllowSampling bool
}

// MaxNameLength bounds a server's name, so that its tools' names keep
// room for the tool's own name within 64 characters.
const MaxNameLength = 32

var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// IsStdio reports whether Deskhand runs the server as a command.
func (c Config) IsStdio() bool { return c.Command != "" }

// Validate says what is wrong with the configuration, in words a person
// can act on.
func (c Config) Validate() error {
	switch {
	case c.Name == "":
		return errors.New("a tool server needs a name")
	case len(c.Name) > MaxNameLength:
		return fmt.Errorf("the tool server name %q is too long: at most %d characters", c.Name, MaxNameLength)
	case !nameRE.MatchString(c.Name):
		return fmt.Errorf("the tool server name %q may use only letters, digits, '_' and '-'", c.Name)
	case strings.Contains(c.Name, "__"):
		return fmt.Errorf("the tool server name %q may not contain \"__\", which separates it from its tools' names", c.Name)
	case c.Command != "" && c.URL != "":
		return fmt.Errorf("tool server %s: give either a command or a URL, not both", c.Name)
	case c.Command == "" && c.URL == "":
		return fmt.Errorf("tool server %s: give a command to run or a URL to connect to", c.Name)
	}
	if c.URL != "" {
		if len(c.Args) > 0 || len(c.Env) > 0 || c.Dir != "" {
			return fmt.Errorf("tool server %s: arguments, environment and folder apply only to a command, not to a URL", c.Name)
		}
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("tool server %s: the URL must be an http:// or https:// address, such as https://example.com/mcp", c.Name)
		}
		for k := range c.Headers {
			if k == "" || strings.ContainsAny(k, " \t\r\n:") {
				return fmt.Errorf("tool server %s: %q is not a valid header name", c.Name, k)
			}
			if strings.ContainsAny(c.Headers[k], "\r\n") {
				return fmt.Errorf("tool server %s: the value of header %s contains a line break", c.Name, k)
			}
		}
		return nil
	}
	if len(c.Headers) > 0 {
		return fmt.Errorf("tool server %s: headers apply only to a URL, not to a command", c.Name)
	}
	if strings.TrimSpace(c.Command) != c.Command {
		return fmt.Errorf("tool server %s: the command %q starts or ends with spaces; give its arguments separately", c.Name, c.Command)
	}
	for k := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("tool server %s: %q is not a valid environment variable name", c.Name, k)
		}
	}
	return nil
}

// Equal reports whether two configurations start the same server.
func (c Config) Equal(o Config) bool {
	return c.Name == o.Name && c.Command == o.Command && slices.Equal(c.Args, o.Args) &&
		maps.Equal(c.Env, o.Env) && c.Dir == o.Dir && c.URL == o.URL &&
		maps.Equal(c.Headers, o.Headers) && c.AllowSampling == o.AllowSampling
}

// LogValue shows the configuration without its secrets: the names of the
// environment variables and headers, never their values, and no
// arguments (people put tokens there too).
func (c Config) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("name", c.Name)}
	if c.IsStdio() {
		attrs = append(attrs, slog.String("command", c.Command), slog.Int("args", len(c.Args)),
			slog.Any("env", slices.Sorted(maps.Keys(c.Env))))
	} else {
		attrs = append(attrs, slog.String("url", redactURL(c.URL)), slog.Any("headers", slices.Sorted(maps.Keys(c.Headers))))
	}
	return slog.GroupValue(attrs...)
}

// String is LogValue's text, so that a Config printed by mistake shows no
// secret.
func (c Config) String() string { return c.LogValue().String() }

// Where says where the server is, for messages: its command's name or
// its URL without credentials or query.
func (c Config) Where() string {
	if c.IsStdio() {
		return c.Command
	}
	return redactURL(c.URL)
}

func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an invalid URL)"
	}
	u.User = nil
	u.RawQuery = ""
	u.Fragment = ""
	return u.String()
}

// validateSet checks each configuration and that the names are unique.
func validateSet(configs []Config) error {
	seen := map[string]bool{}
	for _, c := range configs {
		if err := c.Validate(); err != nil {
			return err
		}
		if seen[c.Name] {
			return fmt.Errorf("two tool servers are named %q; names must be unique", c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// scrub hides the configuration's secrets in text meant for a person, a
// model or a log (a server's error may quote its URL with a key in the
// query, its stderr may print a token): the URL becomes its redacted
// form, header and environment values are replaced.
func (c Config) scrub(text string) string {
	if c.URL != "" {
		text = strings.ReplaceAll(text, c.URL, redactURL(c.URL))
	}
	for _, m := range []map[string]string{c.Headers, c.Env} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if v := m[k]; len(v) >= agent.MinSecretLength {
				text = strings.ReplaceAll(text, v, "["+k+" hidden]")
			}
		}
	}
	return text
}

// scrubError is err with its text scrubbed (nil stays nil).
func (c Config) scrubError(err error) error {
	if err == nil {
		return nil
	}
	if s := c.scrub(err.Error()); s != err.Error() {
		return errors.New(s)
	}
	return err
}
