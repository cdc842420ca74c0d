package main

import (
	"bytes"
	"strings"
	"testing"
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
	var stderr bytes.Buffer
	run([]string{"stream", "list", "--addr", "127.0.0.1:1", "--timeout", "2s"}, &stderr)
	if line := stderr.String(); !strings.Contains(line, "is a broker running?") || strings.Contains(line, "felix/") {
		t.Errorf("a refused connection printed %q, want the hint and no package prefixes", line)
	}
}
