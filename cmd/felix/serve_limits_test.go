package main

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

func TestTheConnectionBoundsAreSettingsWithDefaults(t *testing.T) {
	env := map[string]string{"FELIX_MAX_CONNECTIONS": "100"}
	st := serveSettings()
	err := st.resolve("", func(k string) (string, bool) { v, ok := env[k]; return v, ok }, map[string]string{"frame-timeout": "1m"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseServeConfig(st)
	want := netLimits{frameTimeout: time.Minute, maxConnections: 100, maxInboundBytes: 256 << 20}
	if err != nil || cfg.netLimits != want {
		t.Fatalf("%+v %v, want %+v", cfg.netLimits, err, want)
	}
	var sb strings.Builder
	st.print(&sb)
	contains(t, sb.String(), "max-connections", "env FELIX_MAX_CONNECTIONS", "max-inbound-bytes", "frame-timeout")
	st = serveSettings()
	st.resolve("", osEnv, map[string]string{"max-connections": "0", "max-inbound-bytes": "lots", "frame-timeout": "0"})
	_, err = parseServeConfig(st)
	for _, key := range []string{"--max-connections", "--max-inbound-bytes", "--frame-timeout"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Fatalf("%s not named: %v", key, err)
		}
	}
}

// --max-connections reaches the server: with auth off, the connection
// past it is refused overloaded.
func TestMaxConnectionsHoldsWithAuthOff(t *testing.T) {
	flags := map[string]string{"addr": "127.0.0.1:0", "admin-addr": "", "data": "", "log-format": "text", "log-level": "error",
		"max-connections": "1"}
	cfg := configOf(t, flags)
	b, err := startBroker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop(context.Background())
	first, err := net.Dial("tcp", b.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	first.Write(wire.AppendHello(nil, 1, wire.Hello{VersionMin: 1, VersionMax: 1}))
	if f := readFrame(t, first); f.Type != wire.TypeHelloOK { // admitted and served
		t.Fatalf("the first connection read %v", f.Type)
	}
	second, err := net.Dial("tcp", b.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	f := readFrame(t, second)
	var e wire.Error
	if f.Type != wire.TypeError || e.Decode(f, wire.Limits{}) != nil || e.Code != wire.CodeOverloaded {
		t.Fatalf("the second connection read %v: %+v", f.Type, e)
	}
}

// readFrame reads one frame, within 10 s.
func readFrame(t *testing.T, nc net.Conn) wire.Frame {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var in []byte
	buf := make([]byte, 4096)
	for {
		f, need, err := (&wire.Reader{}).Next(in)
		if err != nil {
			t.Fatal(err)
		}
		if need == 0 {
			return f
		}
		n, err := nc.Read(buf)
		in = append(in, buf[:n]...)
		if err != nil && n == 0 {
			t.Fatalf("read: %v", err)
		}
	}
}
