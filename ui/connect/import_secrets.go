package connect

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
)

// classify splits values into plain ones, secrets and references.
func classify(kind ValueKind, values map[string]string, inputs map[string]string, secrets []Secret, refs []Ref) (map[string]string, []Secret, []Ref) {
	var plain map[string]string
	for _, k := range slices.Sorted(maps.Keys(values)) {
		v := values[k]
		if needs := references(v, inputs); len(needs) > 0 {
			refs = append(refs, Ref{Kind: kind, Key: k, Value: v, Needs: needs})
			continue
		}
		if v != "" && (secretName(kind, k) || secretValue(v)) {
			secrets = append(secrets, Secret{Kind: kind, Key: k, value: v})
			continue
		}
		if plain == nil {
			plain = map[string]string{}
		}
		plain[k] = v
	}
	return plain, secrets, refs
}

// refRE matches what clients fill in: ${env:X}, ${input:x}, ${X},
// ${workspaceFolder}, $X and opencode's {env:X} and {file:PATH}.
var refRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*):([^}]+)\}|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}|\$([A-Za-z_][A-Za-z0-9_]*)|\{env:([A-Za-z_][A-Za-z0-9_]*)\}|\{file:([^}]+)\}`)

// references describes what the references in v need; nil when it has
// none.
func references(v string, inputs map[string]string) []string {
	var needs []string
	for _, m := range refRE.FindAllStringSubmatch(v, -1) {
		switch {
		case m[1] == "input":
			need := cmp.Or(inputs[m[2]], fmt.Sprintf("VS Code input %q", m[2]))
			needs = append(needs, need)
		case m[1] == "env":
			needs = append(needs, "environment variable "+m[2])
		case m[1] != "":
			needs = append(needs, fmt.Sprintf("the client's variable %s:%s", m[1], m[2]))
		case m[3] != "":
			needs = append(needs, "variable "+m[3])
		case m[4] != "":
			needs = append(needs, "environment variable "+m[4])
		case m[5] != "":
			needs = append(needs, "environment variable "+m[5])
		case m[6] != "":
			needs = append(needs, "the content of the file "+m[6])
		}
	}
	return needs
}

// secretHeaders are headers that always carry a secret.
var secretHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "X-Api-Key"}

var secretNameRE = regexp.MustCompile(`(?i)key|token|secret|password|passwd|auth|credential|session|cookie`)

func secretName(kind ValueKind, k string) bool {
	if kind == Header && slices.ContainsFunc(secretHeaders, func(h string) bool { return strings.EqualFold(h, k) }) {
		return true
	}
	return secretNameRE.MatchString(k)
}

func secretValue(v string) bool {
	if agent.LooksSecret(v) {
		return true
	}
	return looksLikeURL(v) && redactURL(v) != v
}

func looksLikeURL(s string) bool { return strings.Contains(s, "://") }

// redactArg hides a secret-looking argument.
func redactArg(a string) string {
	if looksLikeURL(a) {
		return redactURL(a)
	}
	if agent.LooksSecret(a) {
		return "[secret]"
	}
	return a
}

// redactURL hides a URL's password and the values of query parameters
// whose names or values look secret.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if agent.LooksSecret(s) {
			return "[secret]"
		}
		return s
	}
	changed := false
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "secret")
		changed = true
	}
	q := u.Query()
	for k, vs := range q {
		for i, v := range vs {
			if secretNameRE.MatchString(k) || agent.LooksSecret(v) {
				vs[i], changed = "secret", true
			}
		}
	}
	if !changed {
		if agent.LooksSecret(s) {
			return "[secret]"
		}
		return s
	}
	u.RawQuery = q.Encode()
	return strings.ReplaceAll(u.String(), "secret", "[secret]")
}
