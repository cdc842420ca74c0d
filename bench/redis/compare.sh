#!/usr/bin/env bash
# Felix's cache beside Redis on this machine: loopback get and put with 32
# concurrent clients for 0 B, 256 B and 4 KiB values, at equal durability,
# both driven by the same Go load generator (TestFelixBesideRedis), then
# redis-benchmark as a check on the generator, then the memory each keeps
# per key (TestMemoryPerKey).
#
# Run by hand, never by `make test`:
#
#   bench/redis/compare.sh                      # from anywhere in the checkout
#   DIR=/mnt/nvme MILLIS=5000 ROUNDS=5 bench/redis/compare.sh
#
# It installs redis-server and redis-tools from the distribution (apt-get;
# run it as root, or install them first) and builds felix from this
# checkout. Both servers keep their data in a fresh directory under DIR
# (default: the current directory; not /tmp if that is a tmpfs), removed at
# the end. The table goes to standard output and to $OUT (default
# DIR/felix-vs-redis.md, replaced).
#
# Prebuilt programs can stand in for the installs and builds (a machine
# without a network or a Go toolchain): REDIS_SERVER and REDIS_BENCHMARK
# (commands, e.g. with a bundled dynamic loader), FELIX_BIN and
# REDISBENCH_TEST (from `go build ./cmd/felix` and `go test -c ./bench/redis`).
#
# Durability, equal on both sides:
#   periodic   redis appendfsync everysec   felix --fsync periodic:1s
#   oncommit   redis appendfsync always     felix --fsync on_commit
set -euo pipefail

DIR=${DIR:-$PWD}
CLIENTS=${CLIENTS:-32}
KEYS=${KEYS:-100000}
SIZES=${SIZES:-0,256,4096}
MILLIS=${MILLIS:-3000}
ROUNDS=${ROUNDS:-3}
SHARDS=${SHARDS:-4}
MEMKEYS=${MEMKEYS:-1000000}
MODES=${MODES:-"periodic oncommit"}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${OUT:-$DIR/felix-vs-redis.md}
tools=$(mktemp -d)
work=$(mktemp -d "$DIR/felix-vs-redis.XXXXXX")
redis_pid=
felix_pid=
stop_servers() {
	for pid in $redis_pid $felix_pid; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	redis_pid= felix_pid=
}
cleanup() {
	stop_servers
	rm -rf "$work" "$tools"
}
trap cleanup EXIT

REDIS_SERVER=${REDIS_SERVER:-redis-server}
REDIS_BENCHMARK=${REDIS_BENCHMARK:-redis-benchmark}
if [ "$REDIS_SERVER" = redis-server ] && { ! command -v redis-server >/dev/null || ! command -v redis-benchmark >/dev/null; }; then
	echo "installing redis-server and redis-tools (apt-get)" >&2
	apt-get install -y redis-server redis-tools >/dev/null 2>&1 ||
		{ apt-get update >/dev/null && apt-get install -y redis-server redis-tools >/dev/null; }
fi
FELIX_BIN=${FELIX_BIN:-}
REDISBENCH_TEST=${REDISBENCH_TEST:-}
if [ -z "$FELIX_BIN" ]; then
	(cd "$repo" && go build -o "$tools/felix" ./cmd/felix)
	FELIX_BIN=$tools/felix
fi
if [ -z "$REDISBENCH_TEST" ]; then
	(cd "$repo" && go test -c -o "$tools/redisbench.test" ./bench/redis)
	REDISBENCH_TEST=$tools/redisbench.test
fi

redis_port=$((20000 + RANDOM % 20000))
felix_port=$((redis_port + 1))

wait_port() { # $1: port
	for _ in $(seq 200); do
		if (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.05
	done
	echo "nothing listens on port $1" >&2
	return 1
}

start_servers() { # $1: appendfsync, $2: felix fsync
	rm -rf "$work/redis" "$work/felix"
	mkdir -p "$work/redis" "$work/felix"
	$REDIS_SERVER --port "$redis_port" --bind 127.0.0.1 --dir "$work/redis" --appendonly yes \
		--appendfsync "$1" --save "" --daemonize no --protected-mode no --logfile "$work/redis.log" &
	redis_pid=$!
	"$FELIX_BIN" serve --addr "127.0.0.1:$felix_port" --admin-addr "" --data "$work/felix" \
		--fsync "$2" --log-level error >"$work/felix.log" 2>&1 &
	felix_pid=$!
	wait_port "$redis_port"
	wait_port "$felix_port"
}

run_generator() { # $1: label, $2: test to run
	FELIX_BENCH_FELIX_ADDR="127.0.0.1:$felix_port" FELIX_BENCH_REDIS_ADDR="127.0.0.1:$redis_port" \
		FELIX_BENCH_LABEL="$1" FELIX_BENCH_CLIENTS="$CLIENTS" FELIX_BENCH_KEYS="$KEYS" \
		FELIX_BENCH_SIZES="$SIZES" FELIX_BENCH_MILLIS="$MILLIS" FELIX_BENCH_ROUNDS="$ROUNDS" \
		FELIX_BENCH_SHARDS="$SHARDS" FELIX_BENCH_MEMKEYS="$MEMKEYS" FELIX_BENCH_FELIX_PID="$felix_pid" FELIX_BENCH_REDIS_PID="$redis_pid" \
		FELIX_BENCH_OUT="$work/table.md" \
		"$REDISBENCH_TEST" -test.run "^$2\$" -test.v -test.timeout 60m | grep -E '^\s+\S+\.go:[0-9]+: \|' || true
}

checks=$work/redis-benchmark.txt
for mode in $MODES; do
	case $mode in
	periodic) start_servers everysec periodic:1s ;;
	oncommit) start_servers always on_commit ;;
	*) echo "unknown mode $mode" >&2; exit 2 ;;
	esac
	echo "== $mode: Go generator, felix and redis alternating" >&2
	run_generator "$mode" TestFelixBesideRedis
	echo "== $mode: redis-benchmark against the same redis" >&2
	for size in ${SIZES//,/ }; do
		n=$((MILLIS * 20))
		[ "$mode" = oncommit ] && n=$((MILLIS * 3))
		$REDIS_BENCHMARK -h 127.0.0.1 -p "$redis_port" -c "$CLIENTS" -n "$n" -r "$KEYS" -d "$size" -t set,get -q |
			tr '\r' '\n' | grep -E 'requests per second' | sed "s/^/$mode, $size B values: /" | tee -a "$checks" >&2
	done
	stop_servers
done

echo "== memory per key" >&2
start_servers everysec periodic:1s
run_generator memory TestMemoryPerKey
stop_servers

{
	echo "Felix beside Redis $($REDIS_SERVER --version | sed -E 's/.*v=([^ ]+).*/\1/'), $(date -u +%Y-%m-%d), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "clients $CLIENTS, key space $KEYS, felix cache shards $SHARDS, $ROUNDS rounds of ${MILLIS} ms each (median), data in $DIR"
	echo
	cat "$work/table.md"
	echo
	cat "$work/table.md.memory" 2>/dev/null || true
	echo
	echo "redis-benchmark (-c $CLIENTS -r $KEYS), same redis, same run:"
	echo '```'
	cat "$checks"
	echo '```'
} | tee "$OUT"
