#!/usr/bin/env bash
# Runs a download step up to three times, so that one hiccup of a registry
# (apt, npm, the Go module proxy) does not fail a whole run:
#   .ci/retry.sh [--clean PATH] -- COMMAND [ARG...]
# waits 5 s before the second try and 10 s before the third; --clean
# removes PATH before each new try (a half-made node_modules). Each failed
# try is named with its exit status; the last failure's status is kept.
set -uo pipefail

clean=
if [ "${1:-}" = --clean ]; then
	clean=$2
	shift 2
fi
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || { echo "usage: .ci/retry.sh [--clean PATH] -- COMMAND [ARG...]" >&2; exit 2; }

tries=3 wait=${RETRY_WAIT:-5}
for try in $(seq 1 $tries); do
	"$@" && exit 0
	status=$?
	echo "retry.sh: try $try of $tries failed (exit status $status): $*" >&2
	[ "$try" -lt "$tries" ] || exit "$status"
	[ -n "$clean" ] && rm -rf "$clean"
	sleep "$wait"
	wait=$((wait * 2))
done
