#!/usr/bin/env bash
# Runs one fuzz target for a time: hack/fuzz.sh PACKAGE TARGET FUZZTIME.
#
# Go's fuzzing coordinator (go1.26) can end a duration-bound run with a bare
# "context deadline exceeded" when a starved worker misses the deadline
# (golang/go#75804, fixed in go1.27): no input fails, none is written. Such
# a run is run once more; any other failure — a failing input written, a
# panic, an error of the target — fails at once.
set -uo pipefail
pkg=$1 target=$2 fuzztime=$3
go=${GO:-go}
for attempt in 1 2; do
	log=$(mktemp)
	"$go" test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg" 2>&1 | tee "$log"
	status=${PIPESTATUS[0]}
	if [ "$status" -eq 0 ]; then
		rm -f "$log"
		exit 0
	fi
	if [ "$attempt" -eq 1 ] && grep -q 'context deadline exceeded' "$log" &&
		! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' "$log"; then
		echo "fuzz: $target ended on the coordinator's deadline race (golang/go#75804), nothing failing found: once more"
		rm -f "$log"
		continue
	fi
	rm -f "$log"
	exit "$status"
done
