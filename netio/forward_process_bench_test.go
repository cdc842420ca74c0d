package netio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// BenchmarkForwardedPublishProcesses is the forwarded benchmarks with each
// broker in a process of its own (this test binary again, running
// TestForwardingBrokerProcess) and only the clients in this one, as
// brokers and clients run: "a" forwards to "b" over loopback peer.TCP.
// The processes share this machine's processors, but each has its own Go
// processors: the ingress's event loop, waiting in epoll_wait, holds one
// of its own process's, not one the clients or the leader need. The
// baselines are measured in the same rounds as in one process; the direct
// publishes go to "b"'s process.
//
//	go test -run '^$' -bench 'BenchmarkForwardedPublishProcesses' -benchtime 20000x ./netio/
func BenchmarkForwardedPublishProcesses(b *testing.B) {
	leaderPeer, leader := startBrokerProcess(b, "b", "")
	_, ingress := startBrokerProcess(b, "a", leaderPeer)
	ref := wireRef(benchForwardingStream)
	b.Run("single-latency", func(b *testing.B) { benchForwardedLatency(b, ingress, leader, ref) })
	b.Run("batch64", func(b *testing.B) { benchForwardedWindow(b, ingress, leader, ref, 64, 16) })
	b.Run("publishers16", func(b *testing.B) { benchPublishers16(b, ingress, leader, ref) })
}

// The environment of a broker process: its name, and the peer address of
// "b" (for "a", which forwards to it).
const (
	brokerProcessEnv     = "FELIX_BENCH_FORWARDING_BROKER"
	brokerProcessPeerEnv = "FELIX_BENCH_FORWARDING_LEADER_PEER"
)

// TestForwardingBrokerProcess is a broker process of
// BenchmarkForwardedPublishProcesses, and skips anywhere else: it starts
// the broker its environment names, prints its peer and client addresses,
// and serves until its standard input closes.
func TestForwardingBrokerProcess(t *testing.T) {
	name := os.Getenv(brokerProcessEnv)
	if name == "" {
		t.Skip("a broker process of BenchmarkForwardedPublishProcesses")
	}
	leaderPeer := os.Getenv(brokerProcessPeerEnv)
	s, tr := startBenchBroker(t, name, func(id string) (string, error) {
		if id == "b" && leaderPeer != "" {
			return leaderPeer, nil
		}
		return "", errors.New("no such broker")
	})
	fmt.Printf("%s %s\n", tr.Addr(), s.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// startBrokerProcess starts this test binary as broker name's process
// (leaderPeer: "b"'s peer address, for "a") and returns its peer and
// client addresses; it ends with the benchmark.
func startBrokerProcess(b *testing.B, name, leaderPeer string) (peerAddr, clientAddr string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestForwardingBrokerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), brokerProcessEnv+"="+name, brokerProcessPeerEnv+"="+leaderPeer)
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
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if _, serr := fmt.Sscan(line, &peerAddr, &clientAddr); err != nil || serr != nil {
		b.Fatalf("broker %s's process: %q: %v %v", name, strings.TrimSpace(line), err, serr)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return peerAddr, clientAddr
}
