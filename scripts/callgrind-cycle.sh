#!/usr/bin/env bash
# callgrind-cycle.sh: instructions of one in-process cycle, counted by
# valgrind's callgrind (load does not move the count; docs/performance.md).
# Runs BenchmarkCycleSequential for 20 and for 60 cycles; the difference
# divided by 40 is one cycle, setup and warm-up cancelled out. Prints the
# total and the functions with the most self instructions per cycle.
#
#   scripts/callgrind-cycle.sh                # GOGC=off: the GC excluded (its count depends on timing)
#   GOGC=100 scripts/callgrind-cycle.sh       # with the GC
#   scripts/callgrind-cycle.sh -tags ncruces  # another driver (any go test -c flags)
#
# Needs valgrind (callgrind_annotate comes with it).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/callgrind-cycle.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
TOP=${TOP:-25}
(cd "$ROOT" && go test -c "$@" -o "$WORK/agent.test" ./agent)
for n in 20 60; do
	# asyncpreemptoff: callgrind aborts on Go's preemption signals otherwise.
	GOGC=${GOGC:-off} GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$n" \
		"$WORK/agent.test" -test.run '^$' -test.bench 'BenchmarkCycleSequential$' -test.benchtime ${n}x >"$WORK/log.$n" 2>&1 &
done
wait
self() { callgrind_annotate --inclusive=no --auto=no --threshold=100 "$1" | awk '
	/PROGRAM TOTALS/ {next}
	/^ *[0-9,]+ +\([ 0-9.]+%\) +/ {v = $1; gsub(",", "", v); sub(/^ *[0-9,]+ +\([ 0-9.]+%\) +/, ""); sub(/^[^:]*:/, ""); sub(/ \[[^]]*\]$/, ""); print v "\t" $0}'; }
self "$WORK/cg.20" >"$WORK/s.20"
self "$WORK/cg.60" >"$WORK/s.60"
total() { sed -n 's/^summary: //p' "$1"; }
a=$(total "$WORK/cg.20"); b=$(total "$WORK/cg.60")
printf 'instructions per cycle: %.3f M (GOGC=%s; 20 cycles %s, 60 cycles %s)\n' "$(echo "($b - $a) / 40 / 1000000" | bc -l)" "${GOGC:-off}" "$a" "$b"
# The Go scheduler's share (idle spinning, goroutine hand-offs, yields in
# SQLite's WAL read retries) depends on timing and moves the total by
# ±0.3 M between runs of one binary; the rest does not, so compare that.
awk -F'\t' -v n=40 '
	FNR == NR {a[$2] += $1; next} {b[$2] += $1}
	END {for (k in a) b[k] += 0
		for (k in b) {d = (b[k] - a[k]) / n
			if (k ~ /^runtime\.(findRunnable|schedule|goschedImpl|gosched_m|casgstatus|lock2|unlock2|wakep|execute|globrunqget|runqget|runqput|runqgrab|runqsteal|stealWork|park_m|mcall|gogo|ready|goready|notewakeup|notesleep|futex|osyield|usleep|startm|stopm|handoffp|resetspinning|checkTimers|nanotime|netpoll|injectglist|selectgo|chanrecv|chansend|send|recv|gopark|goparkunlock|semacquire|semrelease|\(\*m\)|\(\*p\))/) s += d; else r += d}
		printf "without the Go scheduler: %.3f M (scheduler, channels, spinning: %.3f M)\n", r / 1e6, s / 1e6}' "$WORK/s.20" "$WORK/s.60"
printf '%10s %6s  %s\n' "self/cycle" "share" "function"
awk -F'\t' -v tot="$(echo "($b - $a) / 40" | bc -l)" '
	FNR == NR {a[$2] += $1; next} {b[$2] += $1}
	END {for (k in a) b[k] += 0
		for (k in b) printf "%9.1fK %5.1f%%  %s\n", (b[k] - a[k]) / 40000, 100 * (b[k] - a[k]) / 40 / tot, k}' "$WORK/s.20" "$WORK/s.60" |
	sort -rn | head -n "$TOP"
