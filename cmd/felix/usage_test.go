package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// A command line felix cannot take is one line saying why and where the
// help is, on stderr, and exit status 2: not the whole help on stdout.
func TestAUsageErrorIsOneLineAndExitsTwo(t *testing.T) {
	for _, c := range []struct {
		args []string
		why  string
		help string
	}{
		{[]string{"nosuch"}, "unexpected argument nosuch", "see 'felix --help'"},
		{[]string{"counter", "add", "c"}, `expected "<key> <delta>"`, "see 'felix counter add --help'"},
		{[]string{"stream", "create", "--shards", "x", "a/b"}, "--shards", "see 'felix stream create --help'"},
	} {
		var stderr bytes.Buffer
		if code := run(c.args, &stderr); code != exitUsage {
			t.Errorf("felix %v: exit %d, want %d", c.args, code, exitUsage)
		}
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "felix: ") || !strings.Contains(lines[0], c.why) || lines[1] != c.help {
			t.Errorf("felix %v printed %q, want one line naming %q and then %q", c.args, stderr.String(), c.why, c.help)
		}
	}
}

// A negative delta is a delta, not a flag (the help says negative deltas
// subtract); a key that is a negative number is that key.
func TestANegativeNumberIsTakenAsAPositionalArgument(t *testing.T) {
	parse := func(args ...string) (*cli, error) {
		var c cli
		parser, err := newParser(&c, kong.Exit(func(int) {}))
		if err != nil {
			t.Fatal(err)
		}
		_, err = parser.Parse(args)
		if retry, ok := negativeAsPositional(args, err); ok {
			_, err = parser.Parse(retry)
		}
		return &c, err
	}
	c, err := parse("counter", "add", "acme/prod/sessions", "hits", "-2")
	if err != nil || c.Counter.Add.Delta != -2 {
		t.Fatalf("felix counter add ... -2: delta %d, %v; want -2", c.Counter.Add.Delta, err)
	}
	c, err = parse("counter", "add", "--addr", "127.0.0.1:1", "acme/prod/sessions", "-7", "-3")
	if err != nil || c.Counter.Add.Key != "-7" || c.Counter.Add.Delta != -3 {
		t.Fatalf("felix counter add --addr a c -7 -3: key %q delta %d, %v; want -7 and -3", c.Counter.Add.Key, c.Counter.Add.Delta, err)
	}
	if _, err := parse("counter", "add", "acme/prod/sessions", "hits", "-2", "--addr", "x"); err == nil {
		t.Fatal("a negative number followed by a flag was taken: it is left to the user to put flags first")
	}
}
