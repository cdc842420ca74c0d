package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/ring"
	"github.com/felixbroker/felix/segment"
	"github.com/felixbroker/felix/segment/vfs"
)

func writeLog(t *testing.T, n int) string {
	dir := t.TempDir()
	d, err := ring.Open(ring.Config{Mode: ring.ModePortable})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	l, err := shardlog.Open(shardlog.Options{FS: vfs.NewOS(d), Dir: dir, Fsync: shardlog.OnCommit(), SegmentBytes: 2048})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := l.AppendWait([]shardlog.Entry{{Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "value %d", i)}}, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLogVerifyReportsEverySegmentAndRefusesDamage(t *testing.T) {
	dir := writeLog(t, 100)
	out, err := runCLI(t, "log", "verify", dir)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, out, "verified", "100 records", "offsets [0, 100)", "index: ok")
	path := filepath.Join(dir, segment.SegmentName(0))
	b, _ := os.ReadFile(path)
	b[segment.HeaderSize+10] ^= 1
	os.WriteFile(path, b, 0o644)
	_, err = runCLI(t, "log", "verify", dir)
	if !errors.Is(err, segment.ErrCorrupt) {
		t.Fatalf("verify of a damaged log: %v", err)
	}
}

func TestLogDumpPrintsFromAnOffset(t *testing.T) {
	dir := writeLog(t, 100)
	out, err := runCLI(t, "log", "dump", dir, "--from", "57", "--count", "2")
	if err != nil {
		t.Fatal(err)
	}
	contains(t, out, "offset=57 ", `key="k57"`, `value="value 57"`, "offset=58 ")
	if n := len(splitLines(out)); n != 2 {
		t.Fatalf("%d lines for --count 2:\n%s", n, out)
	}
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}
