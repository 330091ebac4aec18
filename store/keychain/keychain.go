// Package keychain keeps Deskhand's outgoing secrets (model API keys,
// bridged clients' tokens) in the OS keychain through go-keyring, and
// implements [agent.Secrets].
//
// When the keychain cannot be used (no Secret Service on Linux, a locked
// keyring, a call that does not answer in time) a secret is written instead
// to a plain-text JSON file readable only by the user (mode 0600), and the
// Warn callback is told so: never silently. Reads look in that file first,
// then in the keychain. A later successful Set moves the secret back: it is
// stored in the keychain and removed from the file. [Store.Probe] says at
// start whether the keychain is usable and [Store.Insecure] whether any
// secret is in the file, so the app can show both.
//
// Every keychain call runs under a timeout (3s by default), because a
// Secret Service may wait forever for an unlock prompt nobody answers.
package keychain

import (
	"errors"
	"fmt"
	"log"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/deskhand/deskhand/server/agent"
)

// Defaults for [Options].
const (
	DefaultService = "io.deskhand.Deskhand"
	DefaultTimeout = 3 * time.Second
)

// probeKey is the item Probe looks up; it is never written.
const probeKey = "deskhand-keychain-probe"

// ErrTimeout is wrapped by errors of keychain calls that did not answer
// within Options.Timeout.
var ErrTimeout = errors.New("the OS keychain did not answer in time")

// Options configure a [Store]. The zero value is usable but has no
// fallback file, so Set fails when the keychain does.
type Options struct {
	// Service names Deskhand's items in the keychain ("service" attribute
	// on Linux, the service on macOS, the target prefix on Windows).
	// Default DefaultService.
	Service string
	// FallbackPath is the plain-text JSON file (mode 0600) used when the
	// keychain cannot be, e.g. <data folder>/secrets.json. Empty means no
	// fallback: Set returns an error when the keychain fails.
	FallbackPath string
	// Timeout bounds every keychain call. Default DefaultTimeout.
	Timeout time.Duration
	// Warn is told, in words fit for a person, whenever a secret goes to
	// (or stays in) the plain-text file. Default: the standard logger.
	Warn func(msg string)
}

// Store is an [agent.Secrets] over the OS keychain with a 0600 file as
// fallback. It is safe for concurrent use.
type Store struct {
	service string
	path    string
	timeout time.Duration
	warn    func(string)
	kr      backend

	mu sync.Mutex // serialises Get/Set/Delete so the file and keychain agree
}

var _ agent.Secrets = (*Store)(nil)

// InDataFolder is the keychain, with its fallback file in the data folder
// dir; warn is told when a secret goes to (or stays in) that file.
func InDataFolder(dir string, warn func(string)) *Store {
	return New(Options{FallbackPath: filepath.Join(dir, "secrets.json"), Warn: warn})
}

// New returns a Store over the OS keychain (go-keyring).
func New(opts Options) *Store {
	return newStore(opts, goKeyring{})
}

func newStore(opts Options, kr backend) *Store {
	s := &Store{
		service: opts.Service,
		path:    opts.FallbackPath,
		timeout: opts.Timeout,
		warn:    opts.Warn,
		kr:      kr,
	}
	if s.service == "" {
		s.service = DefaultService
	}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	if s.warn == nil {
		s.warn = func(msg string) { log.Print("keychain: " + msg) }
	}
	return s
}

// Probe reports whether the OS keychain is usable: nil if so, otherwise a
// *agent.UserError saying what is wrong, where secrets will go instead and
// what to do about it. It stores nothing.
func (s *Store) Probe() error {
	_, err := s.get(probeKey)
	if err == nil || errors.Is(err, keyring.ErrNotFound) {
		return nil
	}
	reason, hint := s.explain(err)
	where := "secrets cannot be saved"
	if s.path != "" {
		where = fmt.Sprintf("secrets will be kept in plain text in %s (mode 0600)", s.path)
	}
	return &agent.UserError{
		Msg: fmt.Sprintf("the OS keychain is not available (%s): %s.%s", reason, where, hint),
		Err: err,
	}
}

// Report says at start whether secrets are safe: without a keychain, a
// warning when secrets already sit in the fallback file; otherwise once,
// quietly (the first secret saved warns). It returns what Probe found,
// so that a window can say it too without asking the keychain again.
func (s *Store) Report(log *slog.Logger) error {
	err := s.Probe()
	if err != nil && s.Insecure() {
		log.Warn(agent.UserMessage(err))
	} else if err != nil {
		log.Info(agent.UserMessage(err))
	}
	return err
}

// Insecure reports whether any secret lives in the plain-text fallback
// file. A file that exists but cannot be read or parsed counts as insecure.
func (s *Store) Insecure() bool {
	if s.path == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.readFile()
	return err != nil || len(m) > 0
}

// Get returns the secret stored under key: from the fallback file if it is
// there, else from the keychain. A key stored nowhere gives an error
// wrapping agent.ErrNotFound; a keychain that cannot be asked gives a
// *agent.UserError (which does not).
func (s *Store) Get(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.readFile()
	if err != nil {
		return "", err
	}
	if v, ok := m[key]; ok {
		return v, nil
	}
	v, err := s.get(key)
	switch {
	case err == nil:
		return v, nil
	case errors.Is(err, keyring.ErrNotFound):
		return "", fmt.Errorf("secret %q: %w", key, agent.ErrNotFound)
	default:
		return "", s.unavailable(err, "could not read the secret %q", key)
	}
}

// Set stores value under key in the keychain and removes any plain-text
// copy from the fallback file. If the keychain fails in any way, the
// secret is written to the fallback file instead and Warn says so; Set
// then returns nil, since the secret is saved.
func (s *Store) Set(key, value string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kerr := s.set(key, value)
	if kerr == nil {
		if err := s.removeFromFile(key); err != nil {
			return fmt.Errorf("the secret %q was saved in the OS keychain, but its old plain-text copy could not be removed: %w", key, err)
		}
		return nil
	}
	if s.path == "" {
		return s.unavailable(kerr, "could not save the secret %q", key)
	}
	reason, hint := s.explain(kerr)
	m, err := s.readFile()
	if err != nil {
		return fmt.Errorf("could not save the secret %q: the OS keychain is not available (%s), and: %w", key, reason, err)
	}
	m[key] = value
	if err := s.writeFile(m); err != nil {
		return fmt.Errorf("could not save the secret %q: the OS keychain is not available (%s), and: %w", key, reason, err)
	}
	s.warn(fmt.Sprintf("The secret %q was saved in plain text in %s (mode 0600, readable only by you) because the OS keychain is not available (%s).%s",
		key, s.path, reason, hint))
	return nil
}

// Delete removes key from the fallback file and from the keychain. A key
// in neither gives an error wrapping agent.ErrNotFound. If the key was in
// the file but the keychain cannot be asked, Delete succeeds and Warn says
// that a copy may remain in the keychain.
func (s *Store) Delete(key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.readFile()
	if err != nil {
		return err
	}
	_, inFile := m[key]
	if inFile {
		delete(m, key)
		if err := s.writeFile(m); err != nil {
			return fmt.Errorf("could not delete the secret %q: %w", key, err)
		}
	}
	kerr := s.del(key)
	switch {
	case kerr == nil:
		return nil
	case errors.Is(kerr, keyring.ErrNotFound):
		if inFile {
			return nil
		}
		return fmt.Errorf("secret %q: %w", key, agent.ErrNotFound)
	case inFile:
		reason, _ := s.explain(kerr)
		s.warn(fmt.Sprintf("The secret %q was removed from %s, but the OS keychain is not available (%s), so a copy kept there earlier, if any, could not be removed; it will be used again when the keychain works, unless you delete %q again then.",
			key, s.path, reason, key))
		return nil
	default:
		return s.unavailable(kerr, "could not delete the secret %q", key)
	}
}

// unavailable builds the *agent.UserError for a keychain failure.
func (s *Store) unavailable(err error, format string, args ...any) error {
	reason, hint := s.explain(err)
	return &agent.UserError{
		Msg: fmt.Sprintf(format, args...) + fmt.Sprintf(": the OS keychain is not available (%s).%s", reason, hint),
		Err: err,
	}
}

func checkKey(key string) error {
	if key == "" {
		return errors.New("keychain: empty secret name")
	}
	return nil
}
