package keychain

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/deskhand/deskhand/server/agent"
	"github.com/deskhand/deskhand/store/atomicfile"
)

// The fallback file is a JSON object of secret names to secrets, e.g.
// {"ollama.api-key": "..."}, mode 0600 (on Windows, an access list that
// admits only the user, from its creation: atomicfile). Its folder, the
// data folder, is left as the person made it. The file is removed when it
// becomes empty, so its existence alone means secrets are kept in plain
// text.

// readFile returns the fallback file's secrets: an empty map when there is
// no file (or no path). A file that cannot be parsed is a *agent.UserError
// naming it; it is never overwritten.
func (s *Store) readFile() (map[string]string, error) {
	m := map[string]string{}
	if s.path == "" {
		return m, nil
	}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, agent.Userf(err, "could not read the secrets file %s; check that it is readable by you", s.path)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, agent.Userf(err, "the secrets file %s is not valid: it must be a JSON object of names to secret strings. Fix it, or delete it and set the secrets in it again", s.path)
	}
	if m == nil { // the file says null
		m = map[string]string{}
	}
	return m, nil
}

// writeFile replaces the fallback file with m atomically (temp file in the
// same folder, mode 0600, fsync, rename), or removes it when m is empty.
func (s *Store) writeFile(m map[string]string) error {
	var err error
	if len(m) == 0 {
		err = os.Remove(s.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	} else {
		var b []byte
		if b, err = json.MarshalIndent(m, "", "  "); err == nil {
			if err = os.MkdirAll(filepath.Dir(s.path), 0o700); err == nil {
				err = atomicfile.Write(s.path, append(b, '\n'), 0o600)
			}
		}
	}
	if err != nil {
		return agent.Userf(err, "could not write the secrets file %s; check that its folder is writable by you", s.path)
	}
	atomicfile.SyncDir(filepath.Dir(s.path))
	return nil
}

// removeFromFile drops key from the fallback file, if it is there.
func (s *Store) removeFromFile(key string) error {
	m, err := s.readFile()
	if err != nil {
		return err
	}
	if _, ok := m[key]; !ok {
		return nil
	}
	delete(m, key)
	return s.writeFile(m)
}
