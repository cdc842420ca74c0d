#!/usr/bin/env bash
# Felix beside NATS JetStream, the leading Go broker, on this machine: the
# same publish shapes at equal durability, NATS first, Felix right after,
# both printed with the ratio.
#
# Run by hand, never by `make test`:
#
#   bench/nats/compare.sh                 # from the repository root
#   DIR=/mnt/nvme SIZE=128B bench/nats/compare.sh
#   ROUNDS=5 WARMUP=0 bench/nats/compare.sh
#
# It installs nats-server and the nats CLI from the Go module proxy into a
# temporary directory (they never become a dependency of this module) and
# builds felix from this checkout. Prebuilt programs can stand in for the
# installs and builds (a machine without a network or a Go toolchain):
# NATS_SERVER, NATS_CLI and FELIX_BIN (FELIX_LABEL: what to call it in the
# output, e.g. its commit). Both brokers keep their data in a
# fresh directory under DIR (default: the current directory; not /tmp if
# that is a tmpfs), removed at the end.
#
# Shapes, each as one message per request of SIZE bytes into one stream:
#   async    one client, INFLIGHT publishes awaiting their acks
#            (nats: bench js pub async --batch INFLIGHT; felix: --inflight)
#   sync-1   one client, each publish waits for its ack
#   sync-16  sixteen clients, each publish waits for its ack
# Durability, equal on both sides:
#   periodic   nats sync_interval: 100ms   felix --fsync periodic:100ms
#   oncommit   nats sync_interval: always  felix --fsync on_commit
#
# Warm-up, alike on both sides (WARMUP, default 1s; 0 turns it off): felix
# publishes for WARMUP into the stream before measuring (--warmup: a new
# stream's next segment is being zero-filled meanwhile); nats runs the same
# shape once, unmeasured, for about as long, before the measured run.
#
# ROUNDS (default 3) repeats everything, NATS and Felix taking turns shape
# by shape, so other work on a shared machine falls on both; the table of
# each round, then the medians of the rounds, are printed. Latency is each
# publish's wait for its ack, p99, measured by each tool's client. natscli
# times an async publish per batch of INFLIGHT, not per message, so the
# async rows compare throughput only.
set -euo pipefail

NATS_SERVER_VERSION=v2.15.2
NATSCLI_VERSION=v0.5.0
SIZE=${SIZE:-1KiB}
INFLIGHT=${INFLIGHT:-500}
DIR=${DIR:-$PWD}
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-1s}
# Messages per shape and durability; each run takes a few seconds on 2 cores.
PERIODIC_MSGS=${PERIODIC_MSGS:-"200000 20000 50000"}
ONCOMMIT_MSGS=${ONCOMMIT_MSGS:-"20000 5000 10000"}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tools=$(mktemp -d)
work=$(mktemp -d "$DIR/felix-vs-nats.XXXXXX")
nats_pid=
cleanup() {
	if [ -n "$nats_pid" ]; then kill "$nats_pid" 2>/dev/null || true; wait "$nats_pid" 2>/dev/null || true; fi
	rm -rf "$work" "$tools"
}
trap cleanup EXIT

NATS_SERVER=${NATS_SERVER:-}
NATS_CLI=${NATS_CLI:-}
FELIX_BIN=${FELIX_BIN:-}
if [ -z "$NATS_SERVER" ] || [ -z "$NATS_CLI" ]; then
	echo "installing nats-server $NATS_SERVER_VERSION and nats $NATSCLI_VERSION into $tools" >&2
	(cd "$tools" && GOFLAGS= GOBIN="$tools" go install "github.com/nats-io/nats-server/v2@$NATS_SERVER_VERSION")
	(cd "$tools" && GOFLAGS= GOBIN="$tools" go install "github.com/nats-io/natscli/nats@$NATSCLI_VERSION")
	NATS_SERVER=$tools/nats-server NATS_CLI=$tools/nats
fi
if [ -z "$FELIX_BIN" ]; then
	(cd "$repo" && go build -o "$tools/felix" ./cmd/felix)
	FELIX_BIN=$tools/felix
	FELIX_LABEL=${FELIX_LABEL:-"$(cd "$repo" && git rev-parse --short HEAD) (built from this checkout)"}
fi
# FELIX_LABEL names a prebuilt FELIX_BIN in the output (its commit, say).
FELIX_LABEL=${FELIX_LABEL:-"$FELIX_BIN (prebuilt)"}

port=$((20000 + RANDOM % 20000))
url="nats://127.0.0.1:$port"

start_nats() { # $1: sync_interval
	rm -rf "$work/js"
	cat >"$work/js.conf" <<CONF
listen: 127.0.0.1:$port
jetstream {
  store_dir: "$work/js"
  sync_interval: $1
}
CONF
	"$NATS_SERVER" -c "$work/js.conf" >"$work/nats-server.log" 2>&1 &
	nats_pid=$!
	for _ in $(seq 50); do
		"$NATS_CLI" -s "$url" server check connection >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "nats-server did not start; its log:" >&2
	cat "$work/nats-server.log" >&2
	exit 1
}

stop_nats() {
	kill "$nats_pid"
	wait "$nats_pid" 2>/dev/null || true
	nats_pid=
}

# nats_bench MODE CLIENTS MSGS -> natscli's output
nats_bench() {
	local mode=$1 clients=$2 msgs=$3 extra=()
	[ "$mode" = async ] && extra=(--batch "$INFLIGHT")
	"$NATS_CLI" -s "$url" bench js pub "$mode" felix.bench --create --storage file --purge \
		--msgs "$msgs" --size "$SIZE" --clients "$clients" --no-progress "${extra[@]}" 2>&1
}

# nats_warm MODE CLIENTS RATE: the shape once, unmeasured, for about WARMUP
# at the rate last seen (RATE msgs/s; a first guess of 2000 before any).
nats_warm() {
	[ "$WARMUP" = 0 ] && return 0
	local secs msgs
	secs=$(awk -v w="$WARMUP" 'BEGIN { sub(/s$/, "", w); print w + 0 }')
	msgs=$(awk -v r="${3:-2000}" -v s="$secs" -v c="$2" 'BEGIN { m = int(r * s); if (m < 100 * c) m = 100 * c; print m }')
	nats_bench "$1" "$2" "$msgs" >>"$work/nats-warmup.log"
}

# nats_run MODE CLIENTS MSGS -> "msgs/s p99_us"
nats_run() {
	local out
	out=$(nats_bench "$@")
	echo "$out" >>"$work/nats-bench.log"
	local rate p99 line
	rate=$(echo "$out" | grep -E 'publisher (aggregated )?stats:' | sed -E 's/.*stats: ([0-9,]+) msgs\/sec.*/\1/' | tr -d ,)
	line=$(echo "$out" | grep 'latencies per operation' || echo "$out" | grep -E 'publisher stats:')
	p99=$(echo "$line" | sed -E 's/.*P99:? ([0-9,.]+)us.*/\1/' | tr -d ,)
	echo "$rate $p99"
}

# felix_run FSYNC CLIENTS INFLIGHT MSGS -> "records/s p99_us"
felix_run() {
	local fsync=$1 clients=$2 inflight=$3 msgs=$4
	"$FELIX_BIN" bench pub --dir "$work" --fsync "$fsync" --publishers "$clients" --connections "$clients" \
		--inflight "$inflight" --count "$msgs" --size "$SIZE" --baseline-duration 1s --warmup "$WARMUP" \
		--csv >"$work/felix.csv"
	cat "$work/felix.csv" >>"$work/felix-bench.log"
	# The first data row is the workload's own: records_per_s is column 8,
	# p99_ns column 12 (the columns before it hold no commas).
	awk -F, 'NR == 2 { printf "%.0f %.1f\n", $8, $12 / 1000 }' "$work/felix.csv"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }

# Rates seen in the previous round, per shape, to size nats's warm-up.
declare -A last_rate
rows=() # "round shape durability nats_rate nats_p99 felix_rate felix_p99 kind"

# one_shape ROUND NAME DUR MODE CLIENTS INFLIGHT MSGS FSYNC KIND
one_shape() {
	local round=$1 name=$2 dur=$3 mode=$4 clients=$5 inflight=$6 msgs=$7 fsync=$8 kind=$9 n f
	nats_warm "$mode" "$clients" "${last_rate[$name.$dur]:-}"
	n=$(nats_run "$mode" "$clients" "$msgs")
	last_rate[$name.$dur]=${n%% *}
	f=$(felix_run "$fsync" "$clients" "$inflight" "$msgs")
	rows+=("$round $name $dur $n $f $kind")
}

run_durability() { # $1 round, $2 name, $3 nats sync_interval, $4 felix fsync, $5 msgs per shape
	local round=$1 name=$2 interval=$3 fsync=$4
	read -r async_msgs sync1_msgs sync16_msgs <<<"$5"
	start_nats "$interval"
	one_shape "$round" "async-$INFLIGHT" "$name" async 1 "$INFLIGHT" "$async_msgs" "$fsync" async
	one_shape "$round" sync-1 "$name" sync 1 1 "$sync1_msgs" "$fsync" sync
	one_shape "$round" sync-16 "$name" sync 16 1 "$sync16_msgs" "$fsync" sync
	stop_nats
}

for round in $(seq "$ROUNDS"); do
	echo "round $round of $ROUNDS" >&2
	run_durability "$round" periodic 100ms periodic:100ms "$PERIODIC_MSGS"
	run_durability "$round" oncommit always on_commit "$ONCOMMIT_MSGS"
done

header() {
	printf '%-10s %-9s %14s %14s %8s %12s %12s %8s\n' SHAPE FSYNC NATS_MSGS/S FELIX_REC/S FELIX/NATS NATS_P99 FELIX_P99 NATS/FELIX
}
line() { # shape dur nrate np99 frate fp99 kind
	if [ "$7" = async ]; then
		printf '%-10s %-9s %14s %14s %8s %12s %12s %8s\n' "$1" "$2" "$3" "$5" "$(ratio "$5" "$3")" "(per batch)" "${6}us" "-"
	else
		printf '%-10s %-9s %14s %14s %8s %12s %12s %8s\n' "$1" "$2" "$3" "$5" "$(ratio "$5" "$3")" "${4}us" "${6}us" "$(ratio "$4" "$6")"
	fi
}

echo
echo "machine: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $(uname -sr)"
echo "disk:    $(df -T "$work" | awk 'NR == 2 { print $2 " on " $1 }') ($DIR)"
echo "record:  $SIZE, one per request; warm-up $WARMUP; nats-server $NATS_SERVER_VERSION, nats $NATSCLI_VERSION, felix $FELIX_LABEL"
for round in $(seq "$ROUNDS"); do
	echo
	echo "round $round"
	header
	for row in "${rows[@]}"; do
		read -r r shape dur nrate np99 frate fp99 kind <<<"$row"
		[ "$r" = "$round" ] && line "$shape" "$dur" "$nrate" "$np99" "$frate" "$fp99" "$kind"
	done
done

# median VALUES...: the middle one (the lower middle of an even count)
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo
echo "median of $ROUNDS rounds (each column on its own; the ratios are of the medians)"
header
for key in "async-$INFLIGHT periodic" "sync-1 periodic" "sync-16 periodic" "async-$INFLIGHT oncommit" "sync-1 oncommit" "sync-16 oncommit"; do
	read -r shape dur <<<"$key"
	nr=() np=() fr=() fp=() kind=
	for row in "${rows[@]}"; do
		read -r r s d a b c e k <<<"$row"
		if [ "$s" = "$shape" ] && [ "$d" = "$dur" ]; then
			nr+=("$a") np+=("$b") fr+=("$c") fp+=("$e") kind=$k
		fi
	done
	line "$shape" "$dur" "$(median "${nr[@]}")" "$(median "${np[@]}")" "$(median "${fr[@]}")" "$(median "${fp[@]}")" "$kind"
done
echo
echo "FELIX/NATS: Felix's throughput over JetStream's (goal >= 2x). NATS/FELIX: JetStream's p99 ack latency over Felix's (goal >= 2x, i.e. Felix's p99 at most half)."
