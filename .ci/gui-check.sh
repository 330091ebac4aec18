#!/usr/bin/env bash
# Headed check of the desktop app: under Xvfb with a D-Bus session, start
# Deskhand with a fake Ollama, screenshot the window, have an MCP client ask
# a question, answer it in the popup with xdotool, and check the client got
# the answer. Screenshots go to artifacts/screenshots (see README).
set -euo pipefail
cd "$(dirname "$0")/.."
out=artifacts/screenshots
rm -rf "$out" && mkdir -p "$out"
go build -o bin/deskhand .
# With the load probe (ui/desktop/loadprobe.go): it logs what the list shows.
go build -tags loadprobe -o bin/deskhand-probe .
go build -o bin/fakeollama ./models/ollama/ollamatest/testdata/fakeollama
# A home of its own for the X and D-Bus session, not the user's;
# gui-session.sh gives the app and its keyring daemon another.
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
HOME=$home LANG=en_US.UTF-8 timeout 300 xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- .ci/gui-session.sh "$out"
echo "gui check passed; screenshots in $out"
