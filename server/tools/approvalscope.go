package tools

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/deskhand/deskhand/server/agent"
)

// Approval rules ("always allow" narrowed to a folder or a host) are
// checked on where a call reaches as the tool will resolve it: the path
// inside the agent's folders with its links followed, the URL's host.

var (
	_ agent.ApprovalScoper = readFile{}
	_ agent.ApprovalScoper = listDir{}
	_ agent.ApprovalScoper = writeFile{}
	_ agent.ApprovalScoper = fetchURL{}
)

func (readFile) ApprovalScope(a agent.Agent, raw json.RawMessage) (agent.ApprovalScope, error) {
	return fileScope[pathArgs](NameReadFile, a, raw, func(p pathArgs) string { return p.Path }, false)
}

func (listDir) ApprovalScope(a agent.Agent, raw json.RawMessage) (agent.ApprovalScope, error) {
	return fileScope[pathArgs](NameListDir, a, raw, func(p pathArgs) string { return p.Path }, true)
}

func (writeFile) ApprovalScope(a agent.Agent, raw json.RawMessage) (agent.ApprovalScope, error) {
	return fileScope[writeArgs](NameWriteFile, a, raw, func(w writeArgs) string { return w.Path }, false)
}

// fileScope resolves a file tool's path in the agent's folders, as the
// tool does before it opens anything. A folder's own scope is the folder
// (list_dir); a file's is the folder it is in.
func fileScope[A any](tool string, a agent.Agent, raw json.RawMessage, path func(A) string, isDir bool) (agent.ApprovalScope, error) {
	var args A
	if err := decodeArgs(tool, raw, &args); err != nil {
		return agent.ApprovalScope{}, err
	}
	s, err := scopeOf(a)
	if err != nil {
		return agent.ApprovalScope{}, err
	}
	tg, err := s.resolve(path(args))
	if err != nil {
		return agent.ApprovalScope{}, err
	}
	folder := tg.real
	if !isDir {
		folder = filepath.Dir(tg.real)
	}
	return agent.ApprovalScope{Path: tg.real, Folder: folder}, nil
}

func (fetchURL) ApprovalScope(_ agent.Agent, raw json.RawMessage) (agent.ApprovalScope, error) {
	var args fetchArgs
	if err := decodeArgs(NameFetchURL, raw, &args); err != nil {
		return agent.ApprovalScope{}, err
	}
	u, err := url.Parse(strings.TrimSpace(args.URL))
	if err != nil || u.Hostname() == "" {
		return agent.ApprovalScope{}, agent.Userf(err, "invalid URL %q", args.URL)
	}
	return agent.ApprovalScope{Host: strings.ToLower(u.Hostname())}, nil
}
