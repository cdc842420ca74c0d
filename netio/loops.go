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
// same process, the TLS and admin listeners) waits for that. Measured on 2
// vCPUs with felix bench pub (16 synchronous publishers, Periodic,
// interleaved, medians of 3): one loop instead of two, broker in the
// bench's process: 92k records/s, p99 0.49 ms against 71k, 2.0 ms; broker
// in a process of its own: 74k, p99 0.85 ms against 69k, 2.6 ms; one
// pipelined publisher and one synchronous publisher unchanged.
func (c Config) eventLoops() int {
	if c.EventLoops > 0 || !c.Multicore {
		return c.EventLoops
	}
	return max(1, runtime.GOMAXPROCS(0)-1)
}
