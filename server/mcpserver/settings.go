package mcpserver

import (
	"context"
	"encoding/hex"
	"log/slog"
	"strconv"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/server/mcpserver/mcpfill"
)

// Settings is where the person's settings are kept (the core).
type Settings interface {
	Get(ctx context.Context, key, def string) (string, error)
}

// OptionsFrom reads the server's options from the person's settings (its
// metadata, allowed hosts and origins, tools/list page size, session
// tools) and its requestState keys from stateKeys, the value of
// DESKHAND_STATE_KEYS. A setting that cannot be read is logged with its
// key and its default used; keys that are not usable are an error.
func OptionsFrom(ctx context.Context, s Settings, version, stateKeys string, log *slog.Logger) (Options, error) {
	keys, err := parseStateKeys(stateKeys)
	if err != nil {
		return Options{}, err
	}
	setting := func(key string) string { return readSetting(ctx, s, log, key, "") }
	return Options{
		Info: InfoFrom(ctx, s, version, log),
		Guard: GuardOptions{
			AllowedHosts:   splitList(setting("server.allowed_hosts")),
			AllowedOrigins: splitList(setting("server.allowed_origins")),
		},
		StateKeys:    keys,
		PageSize:     pageSizeSetting(setting("server.page_size"), log),
		SessionTools: setting("server.session_tools") == "true",
		Logger:       log,
	}, nil
}

// InfoFrom reads the server's metadata from the settings.
func InfoFrom(ctx context.Context, s Settings, version string, log *slog.Logger) Info {
	get := func(key, def string) string { return readSetting(ctx, s, log, "server."+key, def) }
	return Info{
		Name:         get("name", "deskhand"),
		Version:      version,
		Title:        get("title", "Deskhand"),
		Description:  get("description", "Your own AI agents, served from your desktop."),
		Instructions: get("instructions", "Each tool is an agent. Send it a message; to continue a conversation pass back the handle a previous call returned."),
		WebsiteURL:   get("website", ""),
	}
}

// parseStateKeys reads hex keys, comma-separated, the first sealing
// requestState and all opening it. None: a random key per run, which is
// enough while paused turns live in this process.
func parseStateKeys(env string) ([][]byte, error) {
	var keys [][]byte
	for _, field := range splitList(env) {
		k, err := hex.DecodeString(field)
		if err != nil || len(k) < mcpfill.MinStateKeyBytes {
			return nil, agent.Userf(err, "DESKHAND_STATE_KEYS must hold hex keys of at least %d bytes each, separated by commas (make one with 'openssl rand -hex 32')", mcpfill.MinStateKeyBytes)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// pageSizeSetting reads the tools/list page size setting; 0 means the
// default.
func pageSizeSetting(v string, log *slog.Logger) int {
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		log.Warn("the setting server.page_size must be a whole number above 0; using the default", "value", v)
		return 0
	}
	return n
}

// readSetting is the setting key, or def when it is unset or cannot be
// read; a read error is logged with the key.
func readSetting(ctx context.Context, s Settings, log *slog.Logger, key, def string) string {
	v, err := s.Get(ctx, key, def)
	if err != nil {
		log.Warn("cannot read a setting; using its default", "key", key, "default", def, "err", err)
		return def
	}
	return v
}

func splitList(s string) []string {
	if f := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' || r == ' ' }); len(f) > 0 {
		return f
	}
	return nil
}
