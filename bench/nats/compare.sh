#!/usr/bin/env bash
# Felix beside NATS JetStream, the leading Go broker, on this machine: the
# same publish shapes at equal durability, NATS first, Felix right after,
# both printed with the ratio.
#
# Run by hand, never by `make test`:
#
#   bench/nats/compare.sh                 # from the repository root
#   DIR=/mnt/nvme SIZE=128B bench/nats/compare.sh
#
# It installs nats-server and the nats CLI from the Go module proxy into a
# temporary directory (they never become a dependency of this module) and
# builds felix from this checkout. Both brokers keep their data in a fresh
# directory under DIR (default: the current directory; not /tmp if that is
# a tmpfs), removed at the end.
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
# Latency is each publish's wait for its ack, p99, measured by each tool's
# client. natscli times an async publish per batch of INFLIGHT, not per
# message, so the async rows compare throughput only.
set -euo pipefail

NATS_SERVER_VERSION=v2.15.2
NATSCLI_VERSION=v0.5.0
SIZE=${SIZE:-1KiB}
INFLIGHT=${INFLIGHT:-500}
DIR=${DIR:-$PWD}
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

echo "installing nats-server $NATS_SERVER_VERSION and nats $NATSCLI_VERSION into $tools" >&2
(cd "$tools" && GOFLAGS= GOBIN="$tools" go install "github.com/nats-io/nats-server/v2@$NATS_SERVER_VERSION")
(cd "$tools" && GOFLAGS= GOBIN="$tools" go install "github.com/nats-io/natscli/nats@$NATSCLI_VERSION")
(cd "$repo" && go build -o "$tools/felix" ./cmd/felix)

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
	"$tools/nats-server" -c "$work/js.conf" >"$work/nats-server.log" 2>&1 &
	nats_pid=$!
	for _ in $(seq 50); do
		"$tools/nats" -s "$url" server check connection >/dev/null 2>&1 && return 0
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

# nats_run MODE CLIENTS MSGS -> "msgs/s p99_us"
nats_run() {
	local mode=$1 clients=$2 msgs=$3 extra=()
	[ "$mode" = async ] && extra=(--batch "$INFLIGHT")
	local out
	out=$("$tools/nats" -s "$url" bench js pub "$mode" felix.bench --create --storage file --purge \
		--msgs "$msgs" --size "$SIZE" --clients "$clients" --no-progress "${extra[@]}" 2>&1)
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
	"$tools/felix" bench pub --dir "$work" --fsync "$fsync" --publishers "$clients" --connections "$clients" \
		--inflight "$inflight" --count "$msgs" --size "$SIZE" --baseline-duration 1s --csv >"$work/felix.csv"
	cat "$work/felix.csv" >>"$work/felix-bench.log"
	# The first data row is the workload's own: records_per_s is column 8,
	# p99_ns column 12 (the columns before it hold no commas).
	awk -F, 'NR == 2 { printf "%.0f %.1f\n", $8, $12 / 1000 }' "$work/felix.csv"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }

rows=()
run_durability() { # $1 name, $2 nats sync_interval, $3 felix fsync, $4 msgs per shape
	local name=$1 interval=$2 fsync=$3
	read -r async_msgs sync1_msgs sync16_msgs <<<"$4"
	start_nats "$interval"
	local na n1 n16
	na=$(nats_run async 1 "$async_msgs")
	n1=$(nats_run sync 1 "$sync1_msgs")
	n16=$(nats_run sync 16 "$sync16_msgs")
	stop_nats
	local fa f1 f16
	fa=$(felix_run "$fsync" 1 "$INFLIGHT" "$async_msgs")
	f1=$(felix_run "$fsync" 1 1 "$sync1_msgs")
	f16=$(felix_run "$fsync" 16 1 "$sync16_msgs")
	rows+=("async-$INFLIGHT $name $na $fa async")
	rows+=("sync-1 $name $n1 $f1 sync")
	rows+=("sync-16 $name $n16 $f16 sync")
}

run_durability periodic 100ms periodic:100ms "$PERIODIC_MSGS"
run_durability oncommit always on_commit "$ONCOMMIT_MSGS"

echo
echo "machine: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, $(uname -sr)"
echo "disk:    $(df -T "$work" | awk 'NR == 2 { print $2 " on " $1 }') ($DIR)"
echo "record:  $SIZE, one per request; nats-server $NATS_SERVER_VERSION, nats $NATSCLI_VERSION, felix $(cd "$repo" && git rev-parse --short HEAD)"
echo
printf '%-10s %-9s %14s %14s %8s %12s %12s %8s\n' SHAPE FSYNC NATS_MSGS/S FELIX_REC/S FELIX/NATS NATS_P99 FELIX_P99 NATS/FELIX
for row in "${rows[@]}"; do
	read -r shape dur nrate np99 frate fp99 kind <<<"$row"
	if [ "$kind" = async ]; then
		printf '%-10s %-9s %14s %14s %8s %12s %12s %8s\n' "$shape" "$dur" "$nrate" "$frate" "$(ratio "$frate" "$nrate")" \
			"(per batch)" "${fp99}us" "-"
	else
		printf '%-10s %-9s %14s %14s %8s %12s %12s %8s\n' "$shape" "$dur" "$nrate" "$frate" "$(ratio "$frate" "$nrate")" \
			"${np99}us" "${fp99}us" "$(ratio "$np99" "$fp99")"
	fi
done
echo
echo "FELIX/NATS: Felix's throughput over JetStream's (goal >= 2x). NATS/FELIX: JetStream's p99 ack latency over Felix's (goal >= 2x, i.e. Felix's p99 at most half)."
