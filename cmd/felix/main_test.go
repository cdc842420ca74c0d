package main

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/alecthomas/kong"
)

// runCLI parses args as the felix command line and runs it, returning what
// it printed on standard output.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var c cli
	parser, err := newParser(&c, kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := parser.Parse(args)
	if err != nil {
		return "", err
	}
	r, w, _ := os.Pipe()
	stdout := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	err = ctx.Run()
	w.Close()
	os.Stdout = stdout
	return string(<-done), err
}

func contains(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !bytes.Contains([]byte(out), []byte(w)) {
			t.Fatalf("output lacks %q:\n%s", w, out)
		}
	}
}
