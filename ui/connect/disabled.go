package connect

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"
	"gopkg.in/yaml.v3"
)

// disabledIn says why the client will not use our entry although it is in
// its file ("" when nothing turns it off): the entry's own switch
// (opencode, Zed, Goose, Codex) or the client's list of servers it
// excludes or allows (Gemini CLI, Qwen Code). data has parsed already; a
// value of an unexpected type is taken as not turning the entry off.
func disabledIn(c Client, data []byte, name string) string {
	switch c.ID {
	case OpenCode.ID, Zed.ID, Gemini.ID, Qwen.ID:
		doc := parseDoc(data)
		if doc == nil {
			return ""
		}
		switch c.ID {
		case OpenCode.ID:
			if enabled, ok := field(doc, "mcp", name, "enabled").(bool); ok && !enabled {
				return `its entry says "enabled": false`
			}
			if disabled, ok := field(doc, "mcp", "servers", name, "disabled").(bool); ok && disabled {
				return `its entry under mcp.servers says "disabled": true`
			}
		case Zed.ID:
			if enabled, ok := field(doc, "context_servers", name, "enabled").(bool); ok && !enabled {
				return `its entry says "enabled": false`
			}
		default:
			return excludedBy(doc, name)
		}
	case Codex.ID:
		var doc map[string]any
		if toml.Unmarshal(data, &doc) != nil {
			return ""
		}
		if enabled, ok := field(doc, "mcp_servers", name, "enabled").(bool); ok && !enabled {
			return "its entry says enabled = false"
		}
	case Goose.ID:
		var doc map[string]any
		if yaml.Unmarshal(data, &doc) != nil {
			return ""
		}
		if enabled, ok := field(doc, "extensions", name, "enabled").(bool); ok && !enabled {
			return "its extension says enabled: false"
		}
	}
	return ""
}

// excludedBy reads Gemini CLI's (and Qwen Code's) lists of the servers it
// may not or only may start: mcp.excluded and mcp.allowed, and the older
// excludeMCPServers and allowMCPServers. Names may be globs.
func excludedBy(doc map[string]any, name string) string {
	for _, key := range [][]string{{"mcp", "excluded"}, {"excludeMCPServers"}} {
		if matches(field(doc, key...), name) {
			return fmt.Sprintf("its settings exclude it (%s)", joinKey(key))
		}
	}
	for _, key := range [][]string{{"mcp", "allowed"}, {"allowMCPServers"}} {
		if list, ok := field(doc, key...).([]any); ok && len(list) > 0 && !matches(list, name) {
			return fmt.Sprintf("its settings allow only other servers (%s)", joinKey(key))
		}
	}
	return ""
}

// matches reports whether a list of names or globs holds name.
func matches(list any, name string) bool {
	names, _ := list.([]any)
	for _, n := range names {
		if s, ok := n.(string); ok {
			if ok, _ := path.Match(s, name); ok || s == name {
				return true
			}
		}
	}
	return false
}

// field walks nested objects; nil when a key is missing.
func field(doc map[string]any, keys ...string) any {
	var v any = doc
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func joinKey(key []string) string { return strings.Join(key, ".") }

// outsideState is what the client keeps about our entry outside the file
// that holds it.
type outsideState struct {
	disabled string   // why the client will not use it (see State.Disabled)
	pending  string   // what the person must approve before the client uses it
	offIn    []string // project folders where the client turned it off
}

// stateOutside reads the switches a client keeps in files of its own
// rather than in the entry's file (checked against Gemini CLI 0.61 and
// Claude Code 2.1.332):
//   - Gemini CLI: `gemini mcp disable NAME` writes {"name": {"enabled":
//     false}} to ~/.gemini/mcp-server-enablement.json, names lower-cased.
//   - Claude Code, a project's .mcp.json: the server runs only once
//     approved (enabledMcpjsonServers, or enableAllProjectMcpServers) and
//     not turned off (disabledMcpjsonServers), in the project's entry in
//     ~/.claude.json, ~/.claude/settings.json, or the project's own
//     .claude/settings.json and settings.local.json (these two only in a
//     folder the person trusted).
//   - Qwen Code (checked against 0.24.4), a project's .qwen/settings.json:
//     the server runs only once `qwen mcp approve` recorded it in
//     ~/.qwen/mcpApprovals.json ($QWEN_CODE_MCP_APPROVALS_PATH), bound to a
//     hash of the entry, so an entry with a new token waits for approval
//     again.
//   - Claude Code, ~/.claude.json: `/mcp disable` turns a user server off
//     per project (disabledMcpServers in that project's entry); data is
//     that file, read already.
//
// Files that are missing or do not parse turn nothing off.
func stateOutside(c Client, env Env, data []byte, name string) outsideState {
	switch c.ID {
	case Gemini.ID:
		p, err := Path(c, Env{Home: env.Home, Getenv: env.Getenv})
		if err != nil {
			return outsideState{}
		}
		enablement := filepath.Join(filepath.Dir(p), "mcp-server-enablement.json")
		if enabled, ok := field(readDoc(enablement, maxSize), strings.ToLower(name), "enabled").(bool); ok && !enabled {
			return outsideState{disabled: fmt.Sprintf("`gemini mcp disable` turned it off (%s); `gemini mcp enable %s` turns it back on", enablement, name)}
		}
		if env.Project != "" {
			return geminiTrust(env, p)
		}
	case Qwen.ID:
		if env.Project != "" {
			return qwenProjectState(env, data, name)
		}
	case ClaudeCode.ID:
		if env.Project == "" {
			return outsideState{offIn: projectsTurningOff(parseDoc(data), name)}
		}
		return claudeProjectState(env, name)
	}
	return outsideState{}
}

// geminiTrust is whether Gemini CLI (0.61) reads the settings of the
// project folder env.Project, given its user settings file: only in a
// folder the person trusted, when folder trust is on (the default). The
// longest rule of trustedFolders.json that holds the folder decides;
// TRUST_PARENT trusts the rule's parent folder.
func geminiTrust(env Env, userSettings string) outsideState {
	switch {
	case env.getenv("GEMINI_RESTRICTED_MODE") == "true", env.getenv("GEMINI_CLI_TRUST_WORKSPACE") == "false":
		return outsideState{disabled: "it runs in restricted mode, trusting no folder (GEMINI_RESTRICTED_MODE or GEMINI_CLI_TRUST_WORKSPACE)"}
	case env.getenv("GEMINI_CLI_TRUST_WORKSPACE") == "true":
		return outsideState{}
	}
	if on, ok := field(readDoc(userSettings, maxSize), "security", "folderTrust", "enabled").(bool); ok && !on {
		return outsideState{}
	}
	rules := env.getenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
	if rules == "" {
		rules = filepath.Join(filepath.Dir(userSettings), "trustedFolders.json")
	}
	fold := func(p string) string {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		if env.os() == "windows" || env.os() == "darwin" {
			p = strings.ToLower(p)
		}
		return filepath.Clean(p)
	}
	dir := fold(env.Project)
	longest, level := -1, ""
	for rule, v := range readDoc(rules, maxSize) {
		trust, _ := v.(string)
		holder := rule
		if trust == "TRUST_PARENT" {
			holder = filepath.Dir(rule)
		}
		if rel, err := filepath.Rel(fold(holder), dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && len(rule) > longest {
			longest, level = len(rule), trust
		}
	}
	switch level {
	case "TRUST_FOLDER", "TRUST_PARENT":
		return outsideState{}
	case "DO_NOT_TRUST":
		return outsideState{disabled: fmt.Sprintf("you told it not to trust %s (%s)", env.Project, rules)}
	}
	return outsideState{pending: fmt.Sprintf("Gemini CLI reads this folder's settings once you trust it: start gemini in %s and trust the folder", env.Project)}
}

// claudeProjectState is whether Claude Code uses the server name of the
// project folder env.Project's .mcp.json.
func claudeProjectState(env Env, name string) outsideState {
	global := filepath.Join(env.Home, ".claude.json")
	globalDoc := readDoc(global, maxSizeClaudeCode)
	project, _ := field(globalDoc, "projects", env.Project).(map[string]any)
	type source struct {
		path string
		doc  map[string]any
	}
	sources := []source{{global, project}}
	userSettings := filepath.Join(env.Home, ".claude", "settings.json")
	sources = append(sources, source{userSettings, readDoc(userSettings, maxSize)})
	if trustedFolder(globalDoc, env.Project) {
		for _, base := range []string{"settings.json", "settings.local.json"} {
			p := filepath.Join(env.Project, ".claude", base)
			sources = append(sources, source{p, readDoc(p, maxSize)})
		}
	}
	approved := false
	for _, s := range sources {
		if matchesExactly(s.doc["disabledMcpjsonServers"], name) {
			return outsideState{disabled: fmt.Sprintf("it is turned off for this project (disabledMcpjsonServers in %s)", s.path)}
		}
		all, _ := s.doc["enableAllProjectMcpServers"].(bool)
		approved = approved || all || matchesExactly(s.doc["enabledMcpjsonServers"], name)
	}
	if !approved {
		return outsideState{pending: fmt.Sprintf("Claude Code runs it once you approve it: start claude in %s and choose to use %s", env.Project, name)}
	}
	return outsideState{}
}

// trustedFolder reports whether the person trusted dir, or a folder
// that holds it, in Claude Code's trust dialog.
func trustedFolder(doc map[string]any, dir string) bool {
	for {
		if trusted, _ := field(doc, "projects", dir, "hasTrustDialogAccepted").(bool); trusted {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}

// qwenProjectState is whether Qwen Code runs the server name of the
// project folder env.Project's settings, whose content is data.
func qwenProjectState(env Env, data []byte, name string) outsideState {
	approvals := env.getenv("QWEN_CODE_MCP_APPROVALS_PATH")
	if approvals == "" {
		approvals = filepath.Join(qwenHome(Env{Home: env.Home, Getenv: env.Getenv}), "mcpApprovals.json")
	}
	approve := fmt.Sprintf("run `qwen mcp approve %s` in %s", name, env.Project)
	project := env.Project
	if env.os() == "windows" {
		project = strings.ToLower(project) // as Qwen Code keys it there
	}
	record, _ := field(readDoc(approvals, maxSize), project, name).(map[string]any)
	entry, _ := field(parseDoc(data), "mcpServers", name).(map[string]any)
	switch {
	case record == nil:
		return outsideState{pending: "Qwen Code runs it once you approve it: " + approve}
	case record["hash"] != qwenConfigHash(entry):
		return outsideState{pending: "the entry changed since you approved it in Qwen Code (a new token, say), so it waits for approval again: " + approve}
	case record["status"] == "rejected":
		return outsideState{disabled: fmt.Sprintf("`qwen mcp reject` turned it off for this project (%s)", approvals)}
	case record["status"] != "approved":
		return outsideState{pending: "Qwen Code runs it once you approve it: " + approve}
	}
	return outsideState{}
}

// qwenConfigHash is Qwen Code's hashMcpServerConfig: the SHA-256 of the
// entry as JSON.stringify writes it with every object's keys sorted,
// leaving out the fields that do not change what runs.
func qwenConfigHash(entry map[string]any) string {
	behavioral := map[string]any{}
	for k, v := range entry {
		switch k {
		case "scope", "extensionName", "description":
		default:
			behavioral[k] = v
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // sorts map keys, as the hash wants
	enc.SetEscapeHTML(false)   // as JSON.stringify
	if enc.Encode(behavioral) != nil {
		return ""
	}
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return hex.EncodeToString(sum[:])
}

// projectsTurningOff lists the project folders whose entry in
// ~/.claude.json turns the user server name off, sorted.
func projectsTurningOff(doc map[string]any, name string) []string {
	projects, _ := doc["projects"].(map[string]any)
	var off []string
	for dir, p := range projects {
		if entry, ok := p.(map[string]any); ok && matchesExactly(entry["disabledMcpServers"], name) {
			off = append(off, dir)
		}
	}
	slices.Sort(off)
	return off
}

// matchesExactly reports whether a list of names holds name (Claude Code
// takes no globs).
func matchesExactly(list any, name string) bool {
	names, _ := list.([]any)
	return slices.Contains(names, any(name))
}

// readDoc parses the JSON (with comments) file p of at most limit bytes;
// nil when it is missing, larger or does not parse.
func readDoc(p string, limit int64) map[string]any {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || int64(len(data)) > limit || checkJSONDepth(p, data, maxDepth) != nil {
		return nil
	}
	return parseDoc(data)
}

// parseDoc parses JSON with comments; nil when it does not parse.
func parseDoc(data []byte) map[string]any {
	std, err := hujson.Standardize(bytes.Clone(data))
	var doc map[string]any
	if err != nil || json.Unmarshal(std, &doc) != nil {
		return nil
	}
	return doc
}
