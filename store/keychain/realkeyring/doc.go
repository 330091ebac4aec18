// Package realkeyring holds only a test: TestRealSecretService checks
// store/keychain against a real Secret Service. It is its own test binary
// so that go-keyring's process-global mock (keyring.MockInit, used by
// store/keychain's own tests) can never be installed there. The test runs
// only with DESKHAND_REAL_KEYRING=1, which ../testdata/real-keyring.sh sets
// inside a private D-Bus session with a freshly unlocked gnome-keyring.
package realkeyring
