// Package redisbench measures Felix's cache beside Redis on the same
// machine, in the same run, at equal durability: loopback get and put
// throughput and latency (p50, p99) with 32 concurrent clients for 0 B,
// 256 B and 4 KiB values, and the memory each keeps per key.
//
// It has no code outside its tests: compare.sh starts redis-server (from
// the distribution's package) and `felix serve` built from this checkout,
// and runs TestFelixBesideRedis and TestMemoryPerKey against them. Both
// servers are driven by the same Go load generator (bench.Run, closed
// loop, one connection and one request in flight per client, latency from
// each request's write to its answer's read): a minimal RESP client for
// Redis, the wire codec (netio/wire) for Felix, each speaking its protocol
// directly as redis-benchmark does. redis-benchmark itself runs beside it
// as a check on the generator.
//
// Durability pairs (docs/benchmarks.md, "Cache"):
//
//	redis appendonly yes, appendfsync everysec   felix --fsync periodic:1s
//	redis appendonly yes, appendfsync always     felix --fsync on_commit
//
// What it must never do: run without both servers named (the tests skip
// unless compare.sh set FELIX_BENCH_FELIX_ADDR and FELIX_BENCH_REDIS_ADDR,
// so `make test` never needs Redis), or report a Felix figure without the
// Redis figure measured beside it.
package redisbench
