package netio

import "runtime"

// eventLoops is how many gnet event loops the server runs: EventLoops when
// set; with Multicore, one per processor but one (GOMAXPROCS-1, at least
// one); otherwise 0, which gnet takes as one.
//
// A loop waits for its sockets in epoll_wait, a plain system call, so it
// holds its processor (P) while it waits: the Go runtime takes a P back
// from a system call only after 20 us or more. With a loop per P, once
// every loop waits, a goroutine made runnable by anything but a loop (a
// committer's direct write, a subscription's deliverer, a client in the
// same process, the TLS and admin listeners) waits for that. Leaving one P
// free of loops let synchronous publishers on a 2-vCPU machine publish more
// with a much shorter p99, and changed nothing for a lone or a pipelined
// publisher (docs/benchmarks.md, History, "Publish: what changed"); on a
// small machine a second loop buys cache throughput at the cost of the tail
// (docs/benchmarks.md, "Event loops on 2 vCPUs").
func (c Config) eventLoops() int {
	if c.EventLoops > 0 || !c.Multicore {
		return c.EventLoops
	}
	return max(1, runtime.GOMAXPROCS(0)-1)
}
