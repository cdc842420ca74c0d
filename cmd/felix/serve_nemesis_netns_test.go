//go:build linux

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The network of the partition nemesis (serve_nemesis_partition_test.go):
// each broker in a network namespace of its own, the three on a bridge in
// a namespace the test makes for itself, where nftables rules on the
// bridge cut the links between brokers. Nothing is added to the host's
// namespace: no interface, no address, no rule, no file.
//
//	host namespace       the test as go test ran it, which re-executes
//	 |                   itself (CLONE_NEWNET) and reports what that did
//	switch namespace     the test again, and the workload's client:
//	 |                   fxbr 10.77.0.1/24, and the nftables table
//	 |                   bridge felix_nemesis (chain forward: the cuts)
//	 +- fxv-a ==== eth0 10.77.0.11   broker a's namespace
//	 +- fxv-b ==== eth0 10.77.0.12   broker b's
//	 +- fxv-c ==== eth0 10.77.0.13   broker c's
//
// A broker's namespace is held by a `cat` started in it (CLONE_NEWNET),
// which outlives the broker's restarts; its broker process runs there
// through nsenter (which execs: the pid is the broker's). The client
// listener of every broker is reachable from the switch namespace
// whatever is cut: a cut is between brokers (their peer links and their
// etcd members' traffic), so a client still reaches a leader cut off
// from its followers, as in a real partition.
//
// Everything ends with the processes: the holders read their standard
// input from the switch namespace's test and exit when it closes, the
// brokers stop when theirs does (exitWithStdin), and the switch
// namespace's test exits when the host one's pipe to it closes. A
// namespace with no process left is gone, its veth pair and rules with
// it. At a test's end the cleanups also stop the brokers and the
// holders, each by its pid.

// netnsInnerEnv, set to 1, says the test runs in its switch namespace.
const netnsInnerEnv = "FELIX_TEST_NEMESIS_NETNS"

const (
	netnsBridge = "fxbr"
	netnsSubnet = "10.77.0." // the switch is .1, broker i (0, 1, 2) is .11+i
	netnsTable  = "felix_nemesis"
)

// netnsTools are the programs the network needs.
var netnsTools = []string{"ip", "nft", "nsenter", "cat"}

// netnsMissing says why this machine cannot run the network, or "".
func netnsMissing() string {
	if os.Geteuid() != 0 {
		return "needs root: it makes network namespaces, veth pairs and nftables rules"
	}
	for _, tool := range netnsTools {
		if _, err := exec.LookPath(tool); err != nil {
			if tool == "nft" {
				return "nft (nftables) is not installed: scripts/nemesis-nft installs it as root where apt-get works (make test and make nemesis run it)"
			}
			return fmt.Sprintf("%s is not installed: %v", tool, err)
		}
	}
	return ""
}

// inNemesisNetns is where a test using the network starts. In the host
// namespace it runs the test again in a switch namespace of its own,
// passes, fails or skips as that run did, and returns nil: the caller
// returns at once. In the switch namespace it makes the brokers'
// namespaces and the bridge, and returns the network.
func inNemesisNetns(t *testing.T, names []string) *nemesisNetns {
	t.Helper()
	if os.Getenv(netnsInnerEnv) != "1" {
		if why := netnsMissing(); why != "" {
			t.Skip(why)
		}
		runInSwitchNamespace(t)
		return nil
	}
	go exitWithTheOuterTest()
	return newNemesisNetns(t, names)
}

// runInSwitchNamespace runs t alone, this binary re-executed in a new
// network namespace, its output logged line by line as t's.
func runInSwitchNamespace(t *testing.T) {
	t.Helper()
	args := []string{"-test.run", "^" + regexp.QuoteMeta(t.Name()) + "$", "-test.v", "-test.count=1"}
	if d, ok := t.Deadline(); ok {
		// Time for this side to report, and the brokers to stop, after
		// the inner run's own timeout.
		args = append(args, "-test.timeout", max(time.Until(d)-30*time.Second, time.Minute).String())
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), netnsInnerEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	stdin, err := cmd.StdinPipe() // closed when this test ends: the inner one exits then
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("cannot make a network namespace here (%v): the partition nemesis needs CAP_SYS_ADMIN", err)
		}
		t.Fatalf("re-execute %s in a network namespace: %v", os.Args[0], err)
	}
	t.Logf("running %s in a network namespace of its own (pid %d)", t.Name(), cmd.Process.Pid)
	verdict := ""
	scan := bufio.NewScanner(out)
	scan.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var skipped []string
	for scan.Scan() {
		line := scan.Text()
		t.Log(strings.TrimPrefix(line, "    "))
		switch {
		case strings.HasPrefix(line, "--- PASS: "+t.Name()+" "):
			verdict = "pass"
		case strings.HasPrefix(line, "--- SKIP: "+t.Name()+" "):
			verdict = "skip"
		case verdict == "skip" && strings.HasPrefix(line, "    "):
			skipped = append(skipped, strings.TrimSpace(line))
		}
	}
	err = cmd.Wait()
	switch {
	case verdict == "skip" && err == nil:
		t.Skipf("in its network namespace: %s", strings.Join(skipped, "; "))
	case verdict != "pass" || err != nil:
		t.Fatalf("%s in its network namespace (pid %d) did not pass: %v", t.Name(), cmd.Process.Pid, err)
	}
}

// exitWithTheOuterTest ends the switch namespace's test once the host's
// one has gone (its pipe closed): the brokers and holders then stop as
// their own pipes from this process close.
func exitWithTheOuterTest() {
	io.Copy(io.Discard, os.Stdin)
	fmt.Fprintln(os.Stderr, "the test in the host namespace is gone: exiting")
	os.Exit(3)
}

// nemesisNetns is the network seen from the switch namespace. It is a
// nemesisHosts: broker i listens on 10.77.0.11+i with the default
// ports, its etcd member's client address too (only the switch
// namespace's test asks it, for the timeline of FELIX_NEMESIS_LOGS: a
// broker's own store talks to its member in process).
type nemesisNetns struct {
	t     *testing.T
	names []string
	ip    map[string]string // each broker's address
	ns    map[string]string // each broker's namespace, as nsenter --net takes it
}

func newNemesisNetns(t *testing.T, names []string) *nemesisNetns {
	t.Helper()
	n := &nemesisNetns{t: t, names: names, ip: map[string]string{}, ns: map[string]string{}}
	n.run("ip", "link", "set", "lo", "up")
	n.run("ip", "link", "add", netnsBridge, "type", "bridge")
	n.run("ip", "addr", "add", netnsSubnet+"1/24", "dev", netnsBridge)
	n.run("ip", "link", "set", netnsBridge, "up")
	for i, name := range names {
		pid := n.startHolder(name)
		veth, ip := "fxv-"+name, netnsSubnet+strconv.Itoa(11+i)
		n.ip[name], n.ns[name] = ip, fmt.Sprintf("--net=/proc/%d/ns/net", pid)
		n.run("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", strconv.Itoa(pid))
		n.run("ip", "link", "set", veth, "master", netnsBridge, "up")
		n.run("nsenter", n.ns[name], "ip", "link", "set", "lo", "up")
		n.run("nsenter", n.ns[name], "ip", "addr", "add", ip+"/24", "dev", "eth0")
		n.run("nsenter", n.ns[name], "ip", "link", "set", "eth0", "up")
	}
	table := fmt.Sprintf("table bridge %s {\n\tchain forward { type filter hook forward priority 0; policy accept; }\n}\n", netnsTable)
	if out, err := n.nft(table); err != nil {
		t.Skipf("nftables does not work here (nft -f: %v: %s): no partition can be made", err, out)
	}
	t.Logf("network: bridge %s %s1/24; brokers %v at %v", netnsBridge, netnsSubnet, names, n.ip)
	return n
}

// startHolder starts the process that holds broker name's namespace, and
// stops it, by its pid, when the test ends (after the broker: cleanups
// run last registered first).
func (n *nemesisNetns) startHolder(name string) int {
	n.t.Helper()
	cmd := exec.Command("cat")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		n.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		n.t.Fatalf("start the holder of broker %s's network namespace: %v", name, err)
	}
	n.t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

// run runs a command that sets the network up, failing the test if it
// fails.
func (n *nemesisNetns) run(name string, args ...string) {
	n.t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		n.t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
}

// nft runs an nft script, atomically: all of it or none.
func (n *nemesisNetns) nft(script string) ([]byte, error) {
	cmd := exec.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	return cmd.CombinedOutput()
}

func (n *nemesisNetns) addrs(_ *testing.T, names []string) []brokerAddrs {
	var out []brokerAddrs
	for _, name := range names {
		ip := n.ip[name]
		out = append(out, brokerAddrs{client: ip + ":7117", admin: ip + ":7118", peer: ip + ":7119",
			etcdPeer: ip + ":2380", etcdClient: ip + ":2379"})
	}
	return out
}

func (n *nemesisNetns) command(name string, args []string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{n.ns[name], "--", os.Args[0]}, args...)...)
}

// link is one direction between two brokers: from's packets to to.
type link struct{ from, to string }

// cut drops every packet of each link given, from the moment it returns
// until heal, in one nft transaction (replacing any cut in force).
func (n *nemesisNetns) cut(links []link) {
	n.t.Helper()
	script := fmt.Sprintf("flush chain bridge %s forward\n", netnsTable)
	for _, l := range links {
		script += fmt.Sprintf("add rule bridge %s forward ip saddr %s ip daddr %s counter drop\n", netnsTable, n.ip[l.from], n.ip[l.to])
	}
	if out, err := n.nft(script); err != nil {
		n.t.Fatalf("nft -f (the cut %v): %v: %s", links, err, out)
	}
}

var nftPackets = regexp.MustCompile(`counter packets (\d+)`)

// heal removes every cut and returns how many packets they dropped.
func (n *nemesisNetns) heal() int {
	n.t.Helper()
	listed, err := exec.Command("nft", "list", "chain", "bridge", netnsTable, "forward").CombinedOutput()
	if err != nil {
		n.t.Fatalf("nft list chain: %v: %s", err, listed)
	}
	dropped := 0
	for _, m := range nftPackets.FindAllSubmatch(listed, -1) {
		v, _ := strconv.Atoi(string(m[1]))
		dropped += v
	}
	if out, err := n.nft(fmt.Sprintf("flush chain bridge %s forward\n", netnsTable)); err != nil {
		n.t.Fatalf("nft -f (heal): %v: %s", err, out)
	}
	return dropped
}

// healQuietly removes every cut, logging what fails: for a cleanup.
func (n *nemesisNetns) healQuietly() {
	if out, err := n.nft(fmt.Sprintf("flush chain bridge %s forward\n", netnsTable)); err != nil {
		n.t.Logf("nft -f (heal): %v: %s", err, out)
	}
}
