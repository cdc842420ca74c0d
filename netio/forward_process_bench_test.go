package netio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
)

// BenchmarkForwardedPublishTwoProcesses is the forwarded benchmarks with
// the leader "b" in a process of its own (this test binary again, running
// TestForwardingLeaderProcess), as brokers run: the ingress, its peer
// link and the clients here, the leader's peer listener, relay and engine
// there. Both processes share this machine's processors, but each has its
// own Go processors: the ingress's event loop, waiting in epoll_wait,
// holds one of this process's, not one the leader's goroutines need. The
// baselines are measured in the same rounds as in this process: the
// direct publishes go to the leader's process.
//
//	go test -run '^$' -bench 'BenchmarkForwardedPublishTwoProcesses' -benchtime 20000x ./netio/
func BenchmarkForwardedPublishTwoProcesses(b *testing.B) {
	peerAddr, clientAddr := startLeaderProcess(b)
	ingress, _ := startBenchBroker(b, "a", func(id string) (string, error) {
		if id == "b" {
			return peerAddr, nil
		}
		return "", errors.New("no such broker")
	})
	in, ref := ingress.Addr().String(), wireRef(benchForwardingStream)
	b.Run("single-latency", func(b *testing.B) { benchForwardedLatency(b, in, clientAddr, ref) })
	b.Run("batch64", func(b *testing.B) { benchForwardedWindow(b, in, clientAddr, ref, 64, 16) })
	b.Run("publishers16", func(b *testing.B) { benchPublishers16(b, in, clientAddr, ref) })
}

// leaderProcessEnv marks the process BenchmarkForwardedPublishTwoProcesses
// starts as its leader.
const leaderProcessEnv = "FELIX_BENCH_FORWARDING_LEADER"

// TestForwardingLeaderProcess is the leader process of
// BenchmarkForwardedPublishTwoProcesses, and skips anywhere else: it
// starts broker "b", prints its peer and client addresses, and serves
// until its standard input closes.
func TestForwardingLeaderProcess(t *testing.T) {
	if os.Getenv(leaderProcessEnv) == "" {
		t.Skip("the leader process of BenchmarkForwardedPublishTwoProcesses")
	}
	s, tr := startBenchBroker(t, "b", func(string) (string, error) { return "", errors.New("the leader dials nobody") })
	fmt.Printf("%s %s\n", tr.Addr(), s.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// startLeaderProcess starts this test binary as the leader process and
// returns its peer and client addresses; it ends with the benchmark.
func startLeaderProcess(b *testing.B) (peerAddr, clientAddr string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestForwardingLeaderProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), leaderProcessEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	if _, err := fmt.Fscan(bufio.NewReader(stdout), &peerAddr, &clientAddr); err != nil {
		b.Fatalf("the leader process's addresses: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return peerAddr, clientAddr
}
