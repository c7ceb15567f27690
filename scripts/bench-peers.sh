#!/usr/bin/env bash
# bench-peers.sh: luban's cycle benchmarks side by side with the peers of
# ../shared/peers (Eino ADK in Go, LangGraph.js in process and its Agent
# Server over HTTP), alternating the programs round by round on one machine,
# then the medians and the ratio table (docs/performance.md reports it).
#
#   scripts/bench-peers.sh                 # 3 rounds, peers built in a temp dir
#   scripts/bench-peers.sh -r 5 -w /tmp/p  # 5 rounds; keep/reuse the builds in /tmp/p
#   scripts/bench-peers.sh -q              # quick: small counts (a smoke run, not a measure)
#   scripts/bench-peers.sh -b -w /tmp/p    # build only (then run with -w /tmp/p)
#
# Each round runs, in this order: luban in process (agent benchmarks,
# sequential and 8-way), Eino (SQLite WAL, synchronous=NORMAL), LangGraph.js
# in process (SqliteSaver), luban over HTTP (cmd/luban-bench, 1 and 8
# sessions), the LangGraph Agent Server over HTTP (stream mode, 1 and 8).
# A peer that cannot be built here (no Go module proxy, no npm registry, no
# node) is reported as such and left out of the table; nothing is faked.
#
# With LUBAN_TEST_POSTGRES set, each round also runs luban's in-process
# benchmarks on that PostgreSQL server (reported beside SQLite, no target).
#
# Needs: go, and for LangGraph node ≥ 20 with npm (npm ci builds
# better-sqlite3 from source: python3, make, a C++ compiler). LangGraph's
# Python server is not used: the peers' LangGraph is LangGraph.js.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# The peers sit in shared/ beside the clone (../shared/peers), or beside
# the folder of worktrees when this is a worktree.
if [ -z "${PEERS:-}" ]; then
	for d in "$ROOT/../shared/peers" "$ROOT/../../shared/peers"; do
		if [ -d "$d/eino" ]; then PEERS=$(cd "$d" && pwd); break; fi
	done
fi
PEERS=${PEERS:-$ROOT/../shared/peers}
ROUNDS=3
WORK=
QUICK=0
BUILD_ONLY=0
while getopts "r:w:qbh" o; do
	case $o in
	r) ROUNDS=$OPTARG ;;
	w) WORK=$OPTARG ;;
	q) QUICK=1 ;;
	b) BUILD_ONLY=1 ;;
	*) sed -n '2,20p' "$0"; exit 2 ;;
	esac
done
if [ ! -d "$PEERS/eino" ]; then
	echo "bench-peers: no peers at $PEERS (set PEERS=...)" >&2
	exit 1
fi
if [ -z "$WORK" ]; then
	WORK=$(mktemp -d /tmp/bench-peers.XXXXXX)
	trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"
LOG=$WORK/log
mkdir -p "$LOG"
RES=$WORK/results.tsv
: >"$RES"

if [ "$QUICK" = 1 ]; then
	LUBAN_N=200 EINO_N=300 LG_N=100 LG_HTTP_N=40 LG_HTTP_NSEQ=15 DUR=2s PG_N=30
else
	LUBAN_N=2000 EINO_N=2000 LG_N=500 LG_HTTP_N=240 LG_HTTP_NSEQ=60 DUR=5s PG_N=300
fi

say() { printf '%s\n' "$*" >&2; }

# ---- build
say "== building in $WORK"
(cd "$ROOT" && go test -c -o "$WORK/agent.test" ./agent && go build -o "$WORK/luban-bench" ./cmd/luban-bench)
LUBAN_REV=$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo unknown)

EINO=0
if [ ! -x "$WORK/eino/data/eino-bench" ]; then
	rm -rf "$WORK/eino" && cp -r "$PEERS/eino" "$WORK/eino" && chmod -R u+w "$WORK/eino"
	mkdir -p "$WORK/eino/data"
	if (cd "$WORK/eino" && go build -o data/eino-bench .) >"$LOG/eino-build.txt" 2>&1; then EINO=1; else
		say "eino: build failed (see $LOG/eino-build.txt); left out"
	fi
else
	EINO=1
fi

LG=0
if command -v node >/dev/null && command -v npm >/dev/null; then
	if [ ! -d "$WORK/langgraph/node_modules" ]; then
		rm -rf "$WORK/langgraph" && cp -r "$PEERS/langgraph" "$WORK/langgraph" && chmod -R u+w "$WORK/langgraph"
		if (cd "$WORK/langgraph" && npm ci --no-audit --no-fund) >"$LOG/langgraph-build.txt" 2>&1; then LG=1; else
			say "langgraph: npm ci failed (see $LOG/langgraph-build.txt); left out"
			rm -rf "$WORK/langgraph/node_modules"
		fi
	else
		LG=1
	fi
else
	say "langgraph: no node/npm on this machine; left out"
fi

if [ "$BUILD_ONLY" = 1 ]; then
	say "built in $WORK (eino=$EINO langgraph=$LG)"
	exit 0
fi

# record ROUND SYSTEM METRIC VALUE
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$RES"; }

# ---- runs
luban_inproc() { # round
	local out=$LOG/luban-inproc-$1.txt
	"$WORK/agent.test" -test.run '^$' -test.bench 'BenchmarkCycle(Sequential|Parallel8)$' -test.benchtime "${LUBAN_N}x" -test.benchmem >"$out" 2>&1
	record "$1" luban-inproc seq "$(awk '/^BenchmarkCycleSequential/ {for (i=1;i<=NF;i++) if ($i=="cycles/s") print $(i-1)}' "$out")"
	record "$1" luban-inproc par8 "$(awk '/^BenchmarkCycleParallel8/ {for (i=1;i<=NF;i++) if ($i=="cycles/s") print $(i-1)}' "$out")"
	record "$1" luban-inproc commits "$(awk '/^BenchmarkCycleSequential/ {for (i=1;i<=NF;i++) if ($i=="commits/cycle") print $(i-1)}' "$out")"
	record "$1" luban-inproc commits8 "$(awk '/^BenchmarkCycleParallel8/ {for (i=1;i<=NF;i++) if ($i=="commits/cycle") print $(i-1)}' "$out")"
}

eino() {
	local out=$LOG/eino-$1.txt
	(cd "$WORK/eino" && ./data/eino-bench -mode bench -sync NORMAL -n "$EINO_N" -warm 200 -conc 8 -dir "$WORK/eino/data") >"$out" 2>&1
	record "$1" eino seq "$(awk '/^\[sqlite\] conc=1 / {for (i=1;i<=NF;i++) if ($i=="cycles/s") print $(i-1)}' "$out")"
	record "$1" eino par8 "$(awk '/^\[sqlite\] conc=8 / {for (i=1;i<=NF;i++) if ($i=="cycles/s") print $(i-1)}' "$out")"
}

json_field() { # file js-expression-on-r
	node -e 'const fs=require("fs");const l=fs.readFileSync(process.argv[1],"utf8").split("\n").find(s=>s.startsWith("RESULT_JSON "));const r=JSON.parse(l.slice(12));console.log(eval(process.argv[2]))' "$1" "$2"
}

langgraph_inproc() {
	local out=$LOG/langgraph-inproc-$1.txt
	(cd "$WORK/langgraph" && node bench.mjs --savers sqlite --no-rss --n "$LG_N" --warmup 200 --c 8 --json) >"$out" 2>&1
	record "$1" langgraph-inproc seq "$(json_field "$out" 'r.cycles.sqlite.sequential.cycles_per_s')"
	record "$1" langgraph-inproc par8 "$(json_field "$out" 'r.cycles.sqlite.concurrent.cycles_per_s')"
}

luban_http() {
	local s out
	for s in 1 8; do
		out=$LOG/luban-http-$s-$1.txt
		"$WORK/luban-bench" -sessions "$s" -duration "$DUR" -warmup 100 -paused '' >"$out" 2>&1
		local k=seq
		[ "$s" = 8 ] && k=par8
		record "$1" luban-http "$k" "$(sed -n 's/^cycles: .* = \([0-9.]*\) cycles\/s$/\1/p' "$out")"
		record "$1" luban-http "overhead-p99-ms-$s" "$(sed -n 's/^server overhead.*p99 \(.*\)$/\1/p' "$out" | awk '{print ms($1)} function ms(v){ if (v ~ /µs$/) return substr(v,1,length(v)-2)/1000; if (v ~ /ms$/) return substr(v,1,length(v)-2)+0; if (v ~ /s$/) return substr(v,1,length(v)-1)*1000; return v}')"
		record "$1" luban-http "card-p50-ms-$s" "$(sed -n 's/^tool-call chunk.*p50 \([^ ]*\) .*$/\1/p' "$out" | awk '{print ms($1)} function ms(v){ if (v ~ /µs$/) return substr(v,1,length(v)-2)/1000; if (v ~ /ms$/) return substr(v,1,length(v)-2)+0; if (v ~ /s$/) return substr(v,1,length(v)-1)*1000; return v}')"
		record "$1" luban-http "ceiling-pct-$s" "$(sed -n 's/^ratio luban ÷ ceiling: \([0-9.]*\) %.*/\1/p' "$out")"
		record "$1" luban-http "commits-$s" "$(sed -n 's/.*commits per cycle: \([0-9.]*\) .*/\1/p' "$out")"
		record "$1" luban-http "tx-$s" "$(sed -n 's/^transactions per cycle: \([0-9.]*\) .*/\1/p' "$out")"
	done
}

# PostgreSQL beside SQLite (no target yet; the shape), when
# LUBAN_TEST_POSTGRES names a server.
luban_pg() {
	local out=$LOG/luban-pg-$1.txt
	"$WORK/agent.test" -test.run '^$' -test.bench 'BenchmarkCycle(Sequential|Parallel8)Postgres$' -test.benchtime "${PG_N}x" >"$out" 2>&1
	record "$1" luban-pg seq "$(awk '/^BenchmarkCycleSequentialPostgres/ {for (i=1;i<=NF;i++) if ($i=="cycles/s") print $(i-1)}' "$out")"
	record "$1" luban-pg par8 "$(awk '/^BenchmarkCycleParallel8Postgres/ {for (i=1;i<=NF;i++) if ($i=="cycles/s") print $(i-1)}' "$out")"
	record "$1" luban-pg trips "$(awk '/^BenchmarkCycleSequentialPostgres/ {for (i=1;i<=NF;i++) if ($i=="round-trips/cycle") print $(i-1)}' "$out")"
}

langgraph_http() {
	local out=$LOG/langgraph-http-$1.txt
	(cd "$WORK/langgraph" && node bench_http.mjs --modes stream --n "$LG_HTTP_N" --n-seq "$LG_HTTP_NSEQ" --warmup 10 --c 8 --json) >"$out" 2>&1
	record "$1" langgraph-http seq "$(json_field "$out" 'r.cycles.stream.sequential.cycles_per_s')"
	record "$1" langgraph-http par8 "$(json_field "$out" 'r.cycles.stream.concurrent.cycles_per_s')"
}

for r in $(seq 1 "$ROUNDS"); do
	say "== round $r/$ROUNDS ($(cut -d' ' -f1-3 /proc/loadavg) load)"
	record "$r" machine load1 "$(cut -d' ' -f1 /proc/loadavg)"
	say "   luban in process"
	luban_inproc "$r"
	if [ "$EINO" = 1 ]; then say "   eino"; eino "$r" || say "   eino failed (see $LOG/eino-$r.txt)"; fi
	if [ "$LG" = 1 ]; then say "   langgraph in process"; langgraph_inproc "$r" || say "   langgraph failed (see $LOG/langgraph-inproc-$r.txt)"; fi
	say "   luban over HTTP"
	luban_http "$r"
	if [ "$LG" = 1 ]; then say "   langgraph agent server over HTTP"; langgraph_http "$r" || say "   langgraph http failed (see $LOG/langgraph-http-$r.txt)"; fi
	if [ -n "${LUBAN_TEST_POSTGRES:-}" ]; then say "   luban in process on PostgreSQL"; luban_pg "$r" || say "   luban on PostgreSQL failed (see $LOG/luban-pg-$r.txt)"; fi
done

# ---- report: medians over the rounds and the ratios
median() { # system metric
	awk -F'\t' -v s="$1" -v m="$2" '$2==s && $3==m && $4!="" {print $4}' "$RES" | sort -g | awk '{a[NR]=$1} END {if (NR==0) {print "n/a"; exit} if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'
}
values() { awk -F'\t' -v s="$1" -v m="$2" '$2==s && $3==m {printf "%s%s", sep, $4; sep=" · "} END {print ""}' "$RES"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a=="n/a" || b=="n/a" || b+0==0) print "n/a"; else printf "%.2f×", a/b }'; }

cat <<EOF

### bench-peers: $(date -u '+%Y-%m-%d %H:%M UTC'), luban $LUBAN_REV, $ROUNDS rounds (medians; each round's value in order)

machine: $(nproc) CPU, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(go version | cut -d' ' -f3-4), node $(node --version 2>/dev/null || echo none)
load average at each round's start: $(values machine load1); at the end: $(cut -d' ' -f1-3 /proc/loadavg)

| system | cycles/s sequential | cycles/s 8-way | per round (seq / 8-way) |
|---|---|---|---|
| luban in process (agent benchmarks, SQLite WAL NORMAL) | $(median luban-inproc seq) | $(median luban-inproc par8) | $(values luban-inproc seq) / $(values luban-inproc par8) |
| Eino ADK, SQLite WAL NORMAL | $(median eino seq) | $(median eino par8) | $(values eino seq) / $(values eino par8) |
| LangGraph.js, SqliteSaver | $(median langgraph-inproc seq) | $(median langgraph-inproc par8) | $(values langgraph-inproc seq) / $(values langgraph-inproc par8) |
| luban over HTTP (luban-bench, 1 / 8 sessions) | $(median luban-http seq) | $(median luban-http par8) | $(values luban-http seq) / $(values luban-http par8) |
| LangGraph Agent Server over HTTP (stream) | $(median langgraph-http seq) | $(median langgraph-http par8) | $(values langgraph-http seq) / $(values langgraph-http par8) |
| luban in process on PostgreSQL (no target; $(median luban-pg trips) round trips per cycle) | $(median luban-pg seq) | $(median luban-pg par8) | $(values luban-pg seq) / $(values luban-pg par8) |

| target | measured (median) | target | 
|---|---|---|
| in process ÷ Eino, sequential | $(ratio "$(median luban-inproc seq)" "$(median eino seq)") | ≥ 2× |
| in process ÷ Eino, 8-way | $(ratio "$(median luban-inproc par8)" "$(median eino par8)") | ≥ 2× |
| in process ÷ LangGraph.js, sequential / 8-way | $(ratio "$(median luban-inproc seq)" "$(median langgraph-inproc seq)") / $(ratio "$(median luban-inproc par8)" "$(median langgraph-inproc par8)") | — |
| HTTP ÷ LangGraph Agent Server, 1 session | $(ratio "$(median luban-http seq)" "$(median langgraph-http seq)") | ≥ 50× |
| HTTP ÷ LangGraph Agent Server, 8 sessions | $(ratio "$(median luban-http par8)" "$(median langgraph-http par8)") | ≥ 50× |
| HTTP server overhead p99, 8 sessions | $(median luban-http overhead-p99-ms-8) ms | ≤ 5 ms |
| HTTP tool call → user_input_required p50, 8 sessions | $(median luban-http card-p50-ms-8) ms | ≤ 2 ms |
| HTTP luban ÷ commit ceiling, 1 / 8 sessions | $(median luban-http ceiling-pct-1) % / $(median luban-http ceiling-pct-8) % | ≥ 50 % |
| commits per cycle, in process seq / 8-way; HTTP 1 / 8 | $(median luban-inproc commits) / $(median luban-inproc commits8); $(median luban-http commits-1) / $(median luban-http commits-8) | ≤ 3 sequential |
| transactions per cycle over HTTP, 1 / 8 sessions (before group commit shares them) | $(median luban-http tx-1) / $(median luban-http tx-8) | — |
EOF
[ "$EINO" = 1 ] || echo "Eino: not built here (see the build log), so no Eino ratio."
[ "$LG" = 1 ] || echo "LangGraph.js: not installed here (no node/npm or npm ci failed), so no LangGraph ratio."
echo
echo "raw outputs: $LOG (removed at exit unless -w was given)"
