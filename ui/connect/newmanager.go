package connect

import (
	"path/filepath"

	"github.com/deskhand/deskhand/server/agent"
)

// NewManager describes this Deskhand (its endpoint, the binary exe and the
// data folder, named in the entry unless it is defaultData) to the config
// writers; project, when set, is the project folder whose files it writes.
func NewManager(data, defaultData, project, exe, url string, tokens Tokens, secrets agent.Secrets) (*Manager, error) {
	env, err := DefaultEnv()
	if err != nil {
		return nil, agent.Userf(err, "cannot find your home folder")
	}
	if project != "" {
		if env.Project, err = filepath.Abs(project); err != nil {
			return nil, agent.Userf(err, "--project %q", project)
		}
	}
	return &Manager{Env: env, URL: url, Command: exe, Args: StdioArgsFor(data, defaultData), Tokens: tokens, Secrets: secrets}, nil
}

// StdioArgsFor are the arguments Claude Desktop runs deskhand with: the
// data folder is named unless it is the default one.
func StdioArgsFor(data, defaultData string) []string {
	args := append([]string(nil), StdioArgs...)
	if data != defaultData {
		args = append(args, "--data", data)
	}
	return args
}
