package keychain

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/zalando/go-keyring"
)

// backend is the keychain itself. Get and Delete of a missing item return
// keyring.ErrNotFound (or an error wrapping it); any other error means the
// keychain could not be used. Tests inject fakes through newStore, so they
// need not touch go-keyring's process-global mock.
type backend interface {
	Set(service, user, secret string) error
	Get(service, user string) (string, error)
	Delete(service, user string) error
}

// goKeyring is the real backend: macOS Keychain, Windows Credential
// Manager, or the Secret Service over D-Bus on Linux and the BSDs.
type goKeyring struct{}

func (goKeyring) Set(service, user, secret string) error {
	return keyring.Set(service, user, secret)
}

func (goKeyring) Get(service, user string) (string, error) {
	return keyring.Get(service, user)
}

func (goKeyring) Delete(service, user string) error {
	return keyring.Delete(service, user)
}

func (s *Store) get(key string) (string, error) {
	return within(s.timeout, func() (string, error) { return s.kr.Get(s.service, key) })
}

func (s *Store) set(key, value string) error {
	_, err := within(s.timeout, func() (struct{}, error) { return struct{}{}, s.kr.Set(s.service, key, value) })
	return err
}

func (s *Store) del(key string) error {
	_, err := within(s.timeout, func() (struct{}, error) { return struct{}{}, s.kr.Delete(s.service, key) })
	return err
}

// within runs f on its own goroutine and waits at most timeout for it.
//
// On timeout the goroutine is abandoned, not stopped: go-keyring has no
// context or cancel, and on Linux it can block forever inside a D-Bus call
// (a bus that accepts but never answers, or an unlock prompt that nobody
// answers: secret_service.handlePrompt waits on a channel with no
// timeout). Leaving it is the one accepted goroutine leak in Deskhand: the
// alternative is a caller (the GUI, an MCP request) hanging forever. The
// result channel is buffered so a late answer never blocks the goroutine,
// and a late answer is simply dropped: a Set that completes after its
// timeout leaves a copy in the keychain, which is harmless because the
// fallback file (where that Set then wrote) is read first and the next
// successful Set or Delete brings both back in line.
func within[T any](timeout time.Duration, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("keychain backend panicked: %v", p)}
			}
		}()
		v, err := f()
		done <- result{v, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case r := <-done:
		return r.v, r.err
	case <-t.C:
		var zero T
		return zero, fmt.Errorf("%w (waited %s)", ErrTimeout, timeout)
	}
}

// explain turns a keychain error into a short reason and a hint (with a
// leading space, or empty) for people.
func (s *Store) explain(err error) (reason, hint string) {
	hint = osHint()
	var execErr *exec.Error
	var netErr *net.OpError
	msg := err.Error()
	switch {
	case errors.Is(err, ErrTimeout):
		reason = fmt.Sprintf("it did not answer within %s; it may be locked and waiting for a password", s.timeout)
	case errors.Is(err, keyring.ErrSetDataTooBig):
		return "the secret is too large for it", ""
	case errors.Is(err, keyring.ErrUnsupportedPlatform):
		return "this system has no keychain Deskhand can use", ""
	case errors.As(err, &execErr) && strings.Contains(msg, "dbus-launch"):
		reason = "no D-Bus session bus"
	case strings.Contains(msg, "org.freedesktop.secrets"):
		reason = "no Secret Service on the D-Bus session bus"
	case strings.Contains(msg, "failed to unlock"):
		reason = "the keyring is locked and could not be unlocked"
	case errors.As(err, &netErr):
		reason = "the D-Bus session bus cannot be reached"
	default:
		reason = msg
	}
	return reason, hint
}

func osHint() string {
	switch runtime.GOOS {
	case "darwin":
		return " Unlock your login keychain (Keychain Access) to use the keychain."
	case "windows":
		return " Check that Windows Credential Manager is available to use the keychain."
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		return " Install and unlock gnome-keyring or KWallet to use the keychain."
	default:
		return ""
	}
}
