#!/usr/bin/env bash
# Runs inside xvfb-run and dbus-run-session; called by gui-check.sh.
set -euo pipefail
out=$1
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
export HOME=$work/home LANG=en_US.UTF-8
mkdir -p "$HOME/.cursor"
echo '{"mcpServers": {"github": {"url": "https://api.githubcopilot.com/mcp/"}}}' > "$HOME/.cursor/mcp.json"

fail() { echo "gui check: $*" >&2; echo "--- app log:" >&2; cat "$work/app.log" >&2 || true; exit 1; }

# waitfor FILE PATTERN: the first match of PATTERN (an extended regexp
# with one group) in FILE, waiting up to 20 s.
waitfor() {
	for _ in $(seq 200); do
		if m=$(sed -nE "s#.*$2.*#\1#p" "$1" 2>/dev/null | head -n1) && [ -n "$m" ]; then echo "$m"; return 0; fi
		sleep 0.1
	done
	return 1
}

# pixels_vary FILE: the image is not one flat colour.
pixels_vary() {
	sd=$(convert "$1" -format '%[fx:standard_deviation]' info:)
	awk -v sd="$sd" 'BEGIN { exit !(sd > 0.01) }'
}

# shoot FILE: a screenshot of the screen once something is drawn on it,
# waiting up to 30 s (a loaded machine draws the first frame late).
shoot() {
	for _ in $(seq 60); do
		import -window root "$1"
		pixels_vary "$1" && return 0
		sleep 0.5
	done
	return 1
}

bin/fakeollama -addr 127.0.0.1:0 > "$work/ollama.log" 2>&1 &
ollama=$(waitfor "$work/ollama.log" 'listening on (http://[0-9.:]+)') || fail "the fake Ollama did not start"

bin/deskhand --data "$work/data" --addr 127.0.0.1:0 --ollama "$ollama" > "$work/app.log" 2>&1 &
app=$!
url=$(waitfor "$work/app.log" 'serving your agents at (http://[^ ]+)') || fail "Deskhand did not start serving"
shoot "$out/main-window.png" || fail "the main window screenshot is blank"

token=$(bin/deskhand token create gui-check --data "$work/data")
value="teal$RANDOM"
curl -s -m 60 "$url" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' -H 'Mcp-Protocol-Version: 2026-07-28' \
	-H 'Mcp-Method: tools/call' -H 'Mcp-Name: assistant' \
	-d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"assistant","arguments":{"message":"ask: What is your favourite colour?"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"gui-check","version":"0"}}}}' \
	> "$work/call.out" &
call=$!
for _ in $(seq 100); do
	bin/deskhand questions --data "$work/data" | grep -q 'favourite colour' && break
	sleep 0.1
done
sleep 1 # let the popup draw
import -window root "$out/question-popup.png"
pixels_vary "$out/question-popup.png" || fail "the popup screenshot is blank"

# No window manager: the popup sits at the top left, its answer box first.
xdotool mousemove 200 80 click 1
sleep 0.3
xdotool type --delay 30 "$value"
xdotool mousemove 210 138 click 1
wait $call || fail "the client's call failed"
grep -q "You answered: $value" "$work/call.out" || fail "the client did not get the answer typed in the popup: $(cat "$work/call.out")"

# The Connect tab: Cursor's Connect button, then "Write it" in the dialog
# that shows the entry (the dialog is centred, so its buttons stay put).
xdotool mousemove 320 21 click 1
sleep 2
import -window root "$out/connect.png"
xdotool mousemove 34 219 click 1
sleep 1
import -window root "$out/connect-confirm.png"
# The dialog is centred on the window, whose size follows its content:
# "Write it" is 49 px right of and 128 px below the window's centre.
eval "$(xdotool search --name '^Deskhand$' getwindowgeometry --shell | tail -n 5)"
xdotool mousemove $((X + WIDTH / 2 + 49)) $((Y + HEIGHT / 2 + 128)) click 1
for _ in $(seq 100); do
	grep -q '"deskhand"' "$HOME/.cursor/mcp.json" && break
	sleep 0.1
done
bin/deskhand connect --status cursor --data "$work/data" | grep -q 'connected, verified' ||
	fail "Cursor not connected from the Connect tab: $(cat "$HOME/.cursor/mcp.json")"
grep -q '"github"' "$HOME/.cursor/mcp.json" || fail "the Connect tab lost Cursor's other servers"

kill -INT $app
wait $app || fail "Deskhand did not exit cleanly"
