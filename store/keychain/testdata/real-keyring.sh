#!/bin/sh
# real-keyring.sh runs, against a real Secret Service, TestRealSecretService
# (store/keychain/realkeyring), then TestProviderKeyOnlyInTheKeychain
# (package main, issue 15: the API key given to 'deskhand provider add
# --key-stdin', with the app running and not, is in the Secret Service and
# in no file of the data folder, no output and no process's argv; it fails
# if the key is found anywhere else). The Secret Service is a private D-Bus
# session (dbus-run-session) with a gnome-keyring whose new "login" keyring
# is unlocked with a throwaway password, under a fresh temporary HOME, so
# the user's own keyrings and session bus are never touched (the second
# test writes Deskhand's real service name). Everything it starts ends with
# the session.
#
# Usage, from anywhere:   store/keychain/testdata/real-keyring.sh [go test flags...]
#   e.g.                  store/keychain/testdata/real-keyring.sh -v
# Exit status: that of the first go test to fail (2 if a tool is missing).
#
# Needs Go plus, on Debian/Ubuntu:
#   apt-get install -y --no-install-recommends gnome-keyring libsecret-tools dbus
# (dbus provides dbus-run-session; libsecret-tools provides secret-tool, used
# for cross-checks and skipped if absent; procps provides ps; dbus-x11 is NOT needed.)
set -eu

for cmd in go dbus-run-session gnome-keyring-daemon; do
	if ! command -v "$cmd" >/dev/null 2>&1; then
		echo "real-keyring.sh: $cmd not found; install: apt-get install -y --no-install-recommends gnome-keyring libsecret-tools dbus" >&2
		exit 2
	fi
done

cd "$(dirname "$0")/../../.." # the module root

# Keep Go's caches and settings, which live under the real HOME by default.
GOCACHE=$(go env GOCACHE)
GOMODCACHE=$(go env GOMODCACHE)
GOPATH=$(go env GOPATH)
GOENV=$(go env GOENV)
export GOCACHE GOMODCACHE GOPATH GOENV

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -m 700 "$tmp/run"
HOME=$tmp
XDG_DATA_HOME=$tmp/.local/share     # where gnome-keyring keeps keyrings
XDG_CONFIG_HOME=$tmp/.config
XDG_RUNTIME_DIR=$tmp/run            # its control socket: not a running desktop's
export HOME XDG_DATA_HOME XDG_CONFIG_HOME XDG_RUNTIME_DIR
unset GNOME_KEYRING_CONTROL DBUS_SESSION_BUS_ADDRESS
DESKHAND_REAL_KEYRING=1
export DESKHAND_REAL_KEYRING

# dbus-daemon may print "Failed to set fd limit to 65536: Operation not
# permitted"; that is harmless.
dbus-run-session -- sh -c '
	printf %s pass | gnome-keyring-daemon --unlock --components=secrets >/dev/null || {
		echo "real-keyring.sh: gnome-keyring-daemon --unlock failed" >&2
		exit 2
	}
	go test -race -count=1 -run "^TestRealSecretService\$" "$@" ./store/keychain/... || exit
	# Without -race: it builds the whole app, and runs it as child processes.
	exec go test -count=1 -run "^TestProviderKeyOnlyInTheKeychain\$" "$@" .
' real-keyring "$@"
