#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages given as arguments when any is missing.
# Elsewhere it says what is needed instead of guessing.
set -euo pipefail

if ! command -v go >/dev/null 2>&1; then
	echo "Go is not installed: get Go 1.26 or newer from https://go.dev/dl/ and run make again." >&2
	exit 1
fi

case "$(uname -s)" in
Darwin)
	echo "macOS: needs the Xcode command line tools (xcode-select --install) and Node.js 22+ for the interop tests and mingw-w64 for make cross (brew install node@22 mingw-w64; set DESKHAND_NODE=\$(brew --prefix node@22)/bin/node unless it is the node on PATH)." >&2
	exit 0 ;;
MINGW* | MSYS* | CYGWIN*)
	echo "Windows: needs a cgo compiler (e.g. MSYS2 mingw-w64 gcc on PATH) and Node.js 22+ for the interop tests (the installer from nodejs.org; set DESKHAND_NODE to its node.exe unless it is the node on PATH)." >&2
	exit 0 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "Not Debian/Ubuntu: install the equivalents of: $*" >&2
	exit 0
fi

missing=()
for p in "$@"; do
	# Node may come from elsewhere (NodeSource, nvm); its npm is enough.
	case "$p" in nodejs | npm) command -v npm >/dev/null 2>&1 && continue ;; esac
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo=(sudo)
	else
		echo "Missing packages and no root: run as root: apt-get install ${missing[*]}" >&2
		exit 1
	fi
fi
echo "Installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
retry=$(dirname "$0")/retry.sh
"$retry" -- "${sudo[@]}" apt-get update -qq
"$retry" -- "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
