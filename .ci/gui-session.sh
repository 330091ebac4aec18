#!/usr/bin/env bash
# Runs inside xvfb-run and dbus-run-session; called by gui-check.sh. Walks
# the desktop app as a new person would, under a window manager (openbox),
# with xdotool: first run without a model server, a server found, a
# question popup that takes the focus while the main window is in front and
# is answered with Enter, one that waits while the person types, a
# conversation that keeps its place while calls arrive and a search runs,
# each conversation opened after the end of a long one showing its text,
# pause shown in the window and told to clients, an unsaved edit guarded,
# a tool server added, checked and given to an agent in the window alone,
# Connect, the Agents tab at 1024×768, the window at 1.5× scale, the list
# keeping up with four streaming calls on a busy machine, and a start
# without a Secret Service, whose warning Settings shows. Each step
# leaves a screenshot in $out; what can be checked from outside (files,
# the command line, the client's answers, pixels) is checked.
set -euo pipefail
out=$1
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
export HOME=$work/home LANG=en_US.UTF-8
mkdir -p "$HOME/.cursor"
echo '{"mcpServers": {"github": {"url": "https://api.githubcopilot.com/mcp/"}}}' > "$HOME/.cursor/mcp.json"
data=$work/data

fail() { echo "gui check: $*" >&2; echo "--- app log:" >&2; cat "$work/app.log" >&2 || true; exit 1; }

# A Secret Service that works, as on a desktop: this session's
# gnome-keyring, with a new login keyring unlocked by a throwaway password
# (D-Bus would start it locked, and Deskhand would find no keychain). Its
# control socket goes under $work, not beside a running desktop's.
mkdir -m 700 "$work/run"
export XDG_RUNTIME_DIR=$work/run
unset GNOME_KEYRING_CONTROL
printf %s walk | gnome-keyring-daemon --unlock --components=secrets > /dev/null || fail "gnome-keyring-daemon --unlock failed"

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

# shoot NAME: a screenshot of the screen once something is drawn on it,
# waiting up to 30 s (a loaded machine draws the first frame late). The
# app redraws within a frame or two of an event; the short pause lets it.
shoot() {
	sleep 0.7
	for _ in $(seq 60); do
		import -window root "$out/$1.png"
		pixels_vary "$out/$1.png" && return 0
		sleep 0.5
	done
	fail "the screenshot $1 stays blank"
}

# window NAME: the id of the window whose title matches NAME, waiting up to
# 20 s for it to be mapped.
window() {
	for _ in $(seq 200); do
		if id=$(xdotool search --onlyvisible --name "$1" 2>/dev/null | head -n1) && [ -n "$id" ]; then echo "$id"; return 0; fi
		sleep 0.1
	done
	return 1
}

# indialog, nodialog: wait up to 20 s for a dialog over the main window
# to show, or to go. fyne dims the window behind a dialog: the status
# bar's background (23 of 255, bright) at 660,698 turns 14 (dark).
dimmed() {
	[ "$(import -window root -crop "1x1+$((wx + 660))+$((wy + 698))" -format '%[fx:int(255*r)]' info:)" -lt 18 ]
}
indialog() {
	for _ in $(seq 100); do dimmed && return 0; sleep 0.2; done
	return 1
}
nodialog() {
	for _ in $(seq 100); do dimmed || return 0; sleep 0.2; done
	return 1
}

# amber NAME: how many pixels of the screenshot NAME, at the top left of
# Settings → General, are the amber of ⚠ in fyne's own emoji font
# (EmojiOne, bundled: the same on every machine).
amber() {
	convert "$out/$1.png" -crop "200x150+$wx+$((wy + 110))" +repage \
		-fuzz 12% -fill black +opaque '#FFCE31' -fill white -opaque '#FFCE31' -format '%[fx:round(mean*w*h)]' info:
}

# click X Y: a click at X,Y in the main window's content.
click() { xdotool mousemove --window "$main" "$1" "$2" click 1; sleep 0.3; }
# keys KEY…: keys typed to the main window, brought to the front first.
keys() { xdotool windowactivate --sync "$main" key --clearmodifiers "$@"; sleep 0.4; }

# call MESSAGE FILE [TOKEN]: a client's tools/call of the assistant, on
# the 2026-07-28 era, its answer in FILE.
call() {
	curl -s -m 60 "$url" -H "Authorization: Bearer ${3:-$token}" -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' -H 'Mcp-Protocol-Version: 2026-07-28' \
		-H 'Mcp-Method: tools/call' -H 'Mcp-Name: assistant' \
		-d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"assistant","arguments":{"message":"'"$1"'"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"gui-check","version":"0"}}}}' \
		> "$2"
}

# start [ENV…]: Deskhand's desktop ($program, else bin/deskhand) on
# $data, its window found.
start() {
	env "$@" "${program:-bin/deskhand}" --data "$data" --addr 127.0.0.1:0 --ollama http://127.0.0.1:9 > "$work/app.log" 2>&1 &
	app=$!
	url=$(waitfor "$work/app.log" 'serving your agents at (http://[^ ]+)') || fail "Deskhand did not start serving"
	main=$(window '^Deskhand$') || fail "no main window"
}

# corner: the main window's content corner on the screen, in wx and wy,
# from xwininfo (xdotool's geometry is off under a reparenting window
# manager); once the window manager has placed the window.
corner() {
	wx=$(LC_ALL=C xwininfo -id "$main" | sed -n 's/.*Absolute upper-left X: *//p')
	wy=$(LC_ALL=C xwininfo -id "$main" | sed -n 's/.*Absolute upper-left Y: *//p')
}

stop() {
	kill -INT "$app"
	wait "$app" || fail "Deskhand did not exit cleanly"
}

openbox > "$work/openbox.log" 2>&1 &

# 1-2. First run: Ollama runs on a port of its own, so Deskhand's first
# look (the default address, here a dead port) finds no model server, and
# the first-run panel takes the person to a first answered "Try it":
# the server's address typed in the panel, a model picked, Try it. Each
# click, Enter and Tab is counted (typing text is not), no drag and no
# wheel: at most 6.
bin/fakeollama -addr 127.0.0.1:0 -delay 120ms > "$work/ollama.log" 2>&1 &
ollama=$(waitfor "$work/ollama.log" 'listening on (http://[0-9.:]+)') || fail "the fake Ollama did not start"
actions=0
act_click() { actions=$((actions + 1)); click "$@"; }
act_key() { actions=$((actions + 1)); xdotool key "$@"; sleep 0.3; }
start
shoot 01-first-run-no-model-server
# eventually CMD…: CMD succeeds within 10 s.
eventually() {
	for _ in $(seq 100); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}
ollama_set() { bin/deskhand provider list --data "$data" | grep -q "${ollama#http://}"; }
model_set() { bin/deskhand agent list --data "$data" | grep -q 'llama3.2:latest'; }
answered() { bin/deskhand search remember --data "$data" | grep -q 'assistant'; }
act_click 300 128 # the panel's address field
xdotool type --delay 20 "${ollama#http://}"
act_key Return
eventually ollama_set ||
	fail "the address typed in the first-run panel did not set up Ollama: $(bin/deskhand provider list --data "$data")"
shoot 02-model-server-found
act_click 938 89 # Pick a model…
shoot 02b-pick-a-model
act_click 500 337 # the model, in the picker
eventually model_set ||
	fail "the model picked in the first-run panel is not the assistant's: $(bin/deskhand agent list --data "$data")"
shoot 03-ready-to-try
# The panel's last step, "Try it", puts the cursor in the editor's Try it
# field; an answer streams in, and the panel is done.
act_click 825 89 # Try it
xdotool type --delay 20 "hello"
act_key Return
eventually answered || fail "Try it got no answer"
shoot 04-tried-it
echo "first run: a first answered Try it in $actions counted actions"
[ "$actions" -le 6 ] || fail "a first answered Try it took $actions counted actions (at most 6)"
token=$(bin/deskhand token create gui-check --data "$data")

# 3. A question while the main window is in front: the popup takes the
# focus, stays above the main window, and Enter sends the answer.
keys ctrl+1
value="teal$RANDOM"
call "ask: What is your favourite colour?" "$work/ask.out" &
asking=$!
popup=$(window '^Deskhand: assistant asks') || fail "no question popup"
shoot 05-question-popup
[ "$(xdotool getactivewindow)" = "$popup" ] || fail "the popup did not take the focus (active: $(xdotool getactivewindow getwindowname))"
xprop -id "$popup" _NET_WM_STATE | grep -q _NET_WM_STATE_ABOVE || fail "the popup is not kept above: $(xprop -id "$popup" _NET_WM_STATE)"
xdotool windowactivate --sync "$main"
shoot 06-popup-stays-above-the-window
xdotool windowactivate --sync "$popup"
xdotool type --delay 30 "$value"
xdotool key Return
wait $asking || fail "the client's call failed"
grep -q "You answered: $value\"" "$work/ask.out" || fail "the client did not get exactly the answer typed in the popup: $(cat "$work/ask.out")"

# 3b. A question while the person types in the window: the popup waits
# until they stop (it would take their keys), so the whole text lands in
# the field they type in and none of it in the answer.
keys ctrl+3
click 150 94 # the conversations' search field
call "ask: And your favourite number?" "$work/ask2.out" &
asking=$!
xdotool type --delay 250 "typed slowly while asked"
popup=$(window '^Deskhand: assistant asks') || fail "no popup once the typing stopped"
shoot 06b-popup-after-typing
number="$RANDOM"
xdotool windowactivate --sync "$popup"
xdotool type --delay 30 "$number"
xdotool key Return
wait $asking || fail "the client's call failed"
grep -q "You answered: $number\"" "$work/ask2.out" || fail "keys typed in the window before the popup became the answer: $(cat "$work/ask2.out")"
click 150 94
xdotool key ctrl+a BackSpace

# 4. A conversation keeps its place: open the newest, then new calls
# arrive (moving it down the list) and a search that finds it runs; the
# transcript shown stays the same, pixel for pixel. Then a turn is
# watched as it streams.
call "the first of several calls" "$work/c1.out"
keys ctrl+3
corner
# The transcript pane, right of the list.
pane() { convert "$out/$1.png" -crop "540x380+$((wx + 440))+$((wy + 110))" +repage "$work/$1.pane.png"; }
same() { [ "$(compare -metric AE "$work/$1.pane.png" "$work/$2.pane.png" null: 2>&1 || true)" = 0 ]; }
shoot 07-conversations
pane 07-conversations
click 150 135 # the newest conversation, at the top of the list
shoot 08-conversation-open
pane 08-conversation-open
same 07-conversations 08-conversation-open && fail "clicking the newest conversation showed no transcript"
call "another call arrives" "$work/c2.out"
call "and one more" "$work/c3.out"
shoot 09-conversation-after-new-calls
pane 09-conversation-after-new-calls
same 08-conversation-open 09-conversation-after-new-calls || fail "the transcript shown changed when calls arrived"
click 150 94 # the search field
xdotool type --delay 20 "several"
shoot 10-conversation-after-a-search
pane 10-conversation-after-a-search
same 08-conversation-open 10-conversation-after-a-search || fail "the transcript shown changed when a search that finds it ran"
# A search that leaves it out puts it away, and clearing the search
# brings it back.
xdotool key ctrl+a BackSpace
xdotool type --delay 20 "another"
shoot 10b-conversation-left-out-by-a-search
pane 10b-conversation-left-out-by-a-search
same 08-conversation-open 10b-conversation-left-out-by-a-search && fail "a search that leaves the open conversation out still shows it"
xdotool key ctrl+a BackSpace
shoot 10c-search-cleared
pane 10c-search-cleared
same 08-conversation-open 10c-search-cleared || fail "clearing the search did not bring the conversation back"
# A long message makes the fake model stream a long answer, a word every
# 120 ms: open its conversation while it runs. Its last 40 numbers, a line
# each, are one word: they make the transcript taller than the pane, not
# the turn slower.
words=$(seq -s ' ' 1 60)
lines=$(seq -s '\n' 61 100) # \n: a newline once in the call's JSON
call "count with me: $words $lines" "$work/c4.out" &
streaming=$!
sleep 1.5 # the turn has started and is writing
click 150 135
shoot 11-conversation-streaming
wait $streaming || fail "the streamed call failed"
shoot 12-conversation-streamed

# 4b. After reading the end of the long conversation, each of the others
# opens with its text, not the blank below a short transcript's end. The
# list's rows are 62 px apart (from a screenshot's separators), the long
# one on top. Each pane must show something: not one colour, not the
# empty pane, and not the pane before it (so the click opened another
# conversation); a transcript read late gets some 10 s.
xdotool mousemove --window "$main" 700 400 click --repeat 40 --delay 10 5 # to its end
shoot 12b-long-conversation-at-its-end
pane 12b-long-conversation-at-its-end
before=12b-long-conversation-at-its-end
for k in 1 2 3 4 5 6; do
	click 150 $((135 + k * 62))
	shot=12c-opened-after-the-long-one-$k
	for _ in $(seq 12); do
		shoot "$shot"
		pane "$shot"
		pixels_vary "$work/$shot.pane.png" && ! same 07-conversations "$shot" && ! same "$before" "$shot" && break
		sleep 0.2
	done
	pixels_vary "$work/$shot.pane.png" ||
		fail "conversation $((k + 1)) of the list, opened after the end of the long one, shows a blank transcript ($shot.png)"
	same 07-conversations "$shot" && fail "conversation $((k + 1)) of the list, opened after the long one, shows the empty pane ($shot.png)"
	same "$before" "$shot" && fail "clicking conversation $((k + 1)) of the list did not change the transcript shown ($shot.png)"
	before=$shot
done

# 5. Pause: the window shows it, and a client is told so.
keys ctrl+p
shoot 13-paused
call "are you there?" "$work/paused.out"
grep -q 'Deskhand is paused' "$work/paused.out" || fail "a client calling while paused was not told so: $(cat "$work/paused.out")"
keys ctrl+p

# 6. An unsaved edit is guarded: type in the editor, try to leave, keep
# editing, save with Ctrl+S.
keys ctrl+1
click 343 93 # the editor's Settings, beside Try it
click 700 133 # the name field, at the end of its text
xdotool key End
xdotool type --delay 20 " Edited"
shoot 14-unsaved-edit
keys ctrl+n
shoot 15-unsaved-edit-guarded
keys Escape
keys ctrl+s
for _ in $(seq 50); do
	bin/deskhand agent list --data "$data" | grep -q 'Assistant Edited' && break
	sleep 0.1
done
bin/deskhand agent list --data "$data" | grep -q 'Assistant Edited' || fail "Ctrl+S did not save the edit: $(bin/deskhand agent list --data "$data")"

# 6b. A tool server, in the window alone: added in Settings → Tool servers
# (a second Deskhand on a data folder of its own, serving its agents over
# stdio: local, built above, no network), checked there, then given to the
# assistant in its editor, which lists it at once. The command line and
# the control channel only look.
keys ctrl+5
shoot 15a-settings
[ "$(amber 15a-settings)" = 0 ] || fail "Settings shows the keychain warning, or amber where step 10 looks for it (15a-settings.png)"
click 288 94 # Settings' Tool servers
click 61 191 # Add a server…
indialog || fail "Add a server… opened no dialog"
click 500 184 # its name
xdotool type --delay 20 another
click 500 336 # the command to run, under the choice of a program
xdotool type --delay 10 "$PWD/bin/deskhand"
click 500 433 # its arguments, one per line
xdotool type --delay 10 stdio
xdotool key Return
xdotool type --delay 10 -- --data
xdotool key Return
xdotool type --delay 10 "$work/tools"
shoot 15b-tool-server-form
click 547 609 # Add server
nodialog || fail "the tool server form stayed open (15b-tool-server-form.png)"
bin/deskhand toolserver list --data "$data" | grep -q "^another  *stdio  *$PWD/bin/deskhand stdio --data $work/tools " ||
	fail "the tool server added in the window is not registered as typed: $(bin/deskhand toolserver list --data "$data")"
click 832 293 # its Check
indialog || fail "the tool server's Check showed no result"
shoot 15c-tool-server-checked
bin/deskhand toolserver list --data "$data" | grep -Eq '^another .* running +1 ' ||
	fail "Check did not start the tool server and list its tool: $(bin/deskhand toolserver list --data "$data")"
keys Escape
nodialog || fail "Escape did not close the check's result"
keys ctrl+1
# The editor's form from its top, then 39 steps of the wheel down: its
# tool servers' part, with Use a tool server… at 379,419.
xdotool mousemove --window "$main" 650 450 click --repeat 150 --delay 5 4
xdotool mousemove --window "$main" 650 450 click --repeat 39 --delay 10 5
shoot 15d-editor-without-tool-servers
# The strip where a tool server's row shows its Change… and Remove.
serverrow() { convert "$out/$1.png" -crop "140x30+$((wx + 840))+$((wy + 410))" +repage "$work/$1.row.png"; }
serverrow 15d-editor-without-tool-servers
pixels_vary "$work/15d-editor-without-tool-servers.row.png" &&
	fail "the editor's tool servers are not where the walk looks (15d-editor-without-tool-servers.png)"
click 379 419 # Use a tool server…
indialog || fail "Use a tool server… opened no dialog (15d-editor-without-tool-servers.png)"
click 500 204 # the server
click 400 238 # another, the only one
click 235 243 # all its tools
shoot 15e-tool-server-given
click 565 589 # Give these tools
nodialog || fail "the dialog giving the tool server stayed open (15e-tool-server-given.png)"
for _ in $(seq 20); do
	shoot 15f-editor-uses-the-tool-server
	serverrow 15f-editor-uses-the-tool-server
	pixels_vary "$work/15f-editor-uses-the-tool-server.row.png" && break
done
pixels_vary "$work/15f-editor-uses-the-tool-server.row.png" ||
	fail "the editor does not list the tool server it was given (15f-editor-uses-the-tool-server.png)"
curl -s --unix-socket "$data/deskhand.sock" http://deskhand/v1/agents/assistant/toolservers | grep -q '"Server":"another","AllTools":true' ||
	fail "the assistant does not have the tool server given in the window: $(curl -s --unix-socket "$data/deskhand.sock" http://deskhand/v1/agents/assistant/toolservers)"

# 7. Connect: Cursor's row, its Connect button, then the dialog's.
keys ctrl+4
shoot 16-connect
click 918 134 # Cursor's Connect button
shoot 17-connect-confirm
click 550 508 # the dialog's Connect
for _ in $(seq 100); do
	grep -q '"deskhand"' "$HOME/.cursor/mcp.json" && break
	sleep 0.1
done
bin/deskhand connect --status cursor --data "$data" | grep -q 'connected, verified' ||
	fail "Cursor not connected from the Connect tab: $(cat "$HOME/.cursor/mcp.json")"
grep -q '"github"' "$HOME/.cursor/mcp.json" || fail "the Connect tab lost Cursor's other servers"

# 8. The Log tab shows this walk's requests; the command line reads the
# same log through the running app.
keys ctrl+6
shoot 18-log
bin/deskhand log --data "$data" --json | grep -q '"method":"tools/call","agent":"assistant"' ||
	fail "the activity log lacks the walk's calls: $(bin/deskhand log --data "$data" | tail -5)"

# 8b. The Agents tab with the window at 1024×768, the editor's form at its
# top: name, description, model and instructions unscrolled (looked at;
# TestEditorEssentialsOnASmallScreen checks it).
keys ctrl+1
size() { LC_ALL=C xwininfo -id "$main" | sed -n 's/^ *Width: *//p; s/^ *Height: *//p' | paste -sd x; }
xdotool windowmove "$main" 0 0 windowsize "$main" 1024 768
for _ in $(seq 100); do
	[ "$(size)" = 1024x768 ] && break
	sleep 0.1
done
[ "$(size)" = 1024x768 ] || fail "the window is $(size), not 1024x768"
xdotool mousemove --window "$main" 650 400 click --repeat 150 --delay 5 4
shoot 18b-agents-1024x768
stop

# 9. The window at 1.5× scale, and its Agents tab (looked at).
start FYNE_SCALE=1.5
shoot 19-scale-1.5
keys ctrl+1
shoot 19b-agents-1.5x
stop

# 10. Without a Secret Service (the session bus cannot be reached), Settings
# warns where secrets go instead. Its ⚠ is fyne's emoji, amber (#FFCE31):
# the top of Settings → General has some of those pixels now, and none in
# 15a-settings, with the keychain.
start DBUS_SESSION_BUS_ADDRESS=unix:path=$work/no-bus
keys ctrl+5
for _ in $(seq 10); do
	shoot 20-settings-without-keychain
	corner
	[ "$(amber 20-settings-without-keychain)" -ge 20 ] && break
done
[ "$(amber 20-settings-without-keychain)" -ge 20 ] ||
	fail "Settings shows no keychain warning without a Secret Service (20-settings-without-keychain.png)"
stop

# 11. A busy machine: four calls stream at once while two processes burn
# both cores. Each call's row in the list says done within 1 s of its
# client having the answer (issue 38 asks 2 s; the list's own read comes
# within 2 s, so 1 s is what tells the row marked at the turn's end from
# one that waited for the read). The program with the load probe opens the
# Conversations tab and logs each row's state as it changes (with the
# time); each client is a token of its own, which the activity log ties
# to its conversation.
program=bin/deskhand-probe start
burners=()
for _ in 1 2; do
	(while :; do :; done) &
	burners+=($!)
done
busy=()
for k in 1 2 3 4; do
	bin/deskhand token create "busy$k" --data "$data" > "$work/busy$k.token"
	(
		call "count with me: $words" "$work/busy$k.out" "$(cat "$work/busy$k.token")"
		date +%s.%N > "$work/busy$k.end"
	) &
	busy+=($!)
done
for p in "${busy[@]}"; do wait "$p" || fail "a busy call failed"; done
sleep 1.5 # the longest a row may take, and a little more
kill "${burners[@]}"
shoot 21-busy-machine
for k in 1 2 3 4; do
	grep -q '"result"' "$work/busy$k.out" && ! grep -q '"isError":true' "$work/busy$k.out" || fail "busy call $k got no answer: $(cat "$work/busy$k.out")"
	conv=$(bin/deskhand log --data "$data" --json --client "busy$k" | sed -nE 's/.*"method":"tools\/call".*"conversation":"([^"]+)".*/\1/p' | head -n1)
	[ -n "$conv" ] || fail "no conversation of busy$k in the log"
	shown=$(sed -nE 's/^time=([^ ]+) .*msg="conversation row shown" conversation='"$conv"' state=done.*/\1/p' "$work/app.log" | head -n1)
	[ -n "$shown" ] || fail "the row of busy$k ($conv) never said done: $(grep "conversation=$conv" "$work/app.log")"
	late=$(awk -v shown="$(date -d "$shown" +%s.%N)" -v answered="$(cat "$work/busy$k.end")" 'BEGIN { printf "%.2f", shown - answered }')
	echo "busy call $k: its row said done ${late}s after its client had the answer"
	awk -v l="$late" 'BEGIN { exit !(l <= 1) }' || fail "the row of busy call $k said done ${late}s after its client had the answer (at most 1 s)"
done
stop
