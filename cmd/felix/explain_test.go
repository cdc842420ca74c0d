package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/felixbroker/felix/auth"
)

// A failed command says what went wrong once: the object named, the next
// step, no package prefixes.
func TestAFailedCommandSaysWhatWentWrongOnce(t *testing.T) {
	addr := cliBroker(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stream", "describe", "demo/nope"}, "felix: stream default/demo/nope does not exist (felix stream list --namespace demo)"},
		{[]string{"pub", "demo/nope", "x"}, "felix: stream default/demo/nope does not exist"},
		{[]string{"cache", "get", "demo/nocache", "k"}, "felix: cache default/demo/nocache does not exist (felix cache create default/demo/nocache makes it)"},
	} {
		var stderr bytes.Buffer
		if code := run(append(c.args, "--addr", addr), &stderr); code != exitFailed {
			t.Errorf("felix %v: exit %d, want %d", c.args, code, exitFailed)
		}
		line := strings.TrimSpace(stderr.String())
		if !strings.HasPrefix(line, c.want) || strings.Contains(line, "felix/") || strings.Count(line, "\n") > 0 {
			t.Errorf("felix %v printed %q, want one line starting %q", c.args, line, c.want)
		}
	}
	var tlsErr bytes.Buffer
	run([]string{"stream", "list", "--addr", addr, "--tls", "--timeout", "2s"}, &tlsErr)
	if line := tlsErr.String(); !strings.Contains(line, "does not speak TLS: drop --tls") {
		t.Errorf("TLS to a plain listener printed %q, want the hint to drop --tls", line)
	}
	admin := startServed(t, configOf(t, map[string]string{"addr": "127.0.0.1:0", "admin-addr": "127.0.0.1:0", "data": "", "log-level": "error"})).AdminAddr()
	var httpErr bytes.Buffer
	run([]string{"stream", "list", "--addr", admin, "--timeout", "1s"}, &httpErr)
	if line := httpErr.String(); !strings.Contains(line, "rather than its admin (7118)") {
		t.Errorf("dialling an admin address printed %q, want the hint that it is not a client address", line)
	}
	var stderr bytes.Buffer
	run([]string{"stream", "list", "--addr", "127.0.0.1:1", "--timeout", "2s"}, &stderr)
	if line := stderr.String(); !strings.Contains(line, "is a broker running?") || strings.Contains(line, "felix/") {
		t.Errorf("a refused connection printed %q, want the hint and no package prefixes", line)
	}
}

// An expired token's refusal says how to get a new one.
func TestAnExpiredTokenSaysHowToGetANewOne(t *testing.T) {
	dir := t.TempDir()
	if _, err := runCLI(t, "token", "keygen", "--out", dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "felix-signing.key"))
	if err != nil {
		t.Fatal(err)
	}
	priv, err := auth.ParsePrivateKey(b)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := auth.Issue(priv, "acme", "old", []string{"*:*"}, time.Minute, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]string{"addr": "127.0.0.1:0", "admin-addr": "", "data": t.TempDir(), "log-level": "error",
		"auth-keys": filepath.Join(dir, "felix-signing.pub")}
	addr := startServed(t, configOf(t, flags)).Addr().String()
	var stderr bytes.Buffer
	if code := run([]string{"stream", "list", "--addr", addr, "--token", tok, "--timeout", "3s"}, &stderr); code != exitFailed {
		t.Fatalf("exit %d", code)
	}
	if line := stderr.String(); !strings.Contains(line, "expired") || !strings.Contains(line, "felix token issue") {
		t.Errorf("an expired token printed %q, want it said expired and how to get another", line)
	}
}
