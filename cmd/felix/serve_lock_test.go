package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/datadir"
)

// brokerOn starts a broker on dataDir with ports of its own.
func brokerOn(t *testing.T, dataDir string) (*served, error) {
	t.Helper()
	flags := map[string]string{"addr": "127.0.0.1:0", "admin-addr": "", "data": dataDir, "log-format": "text", "log-level": "error"}
	cfg := configOf(t, flags)
	return startBroker(cfg)
}

// treeDigest hashes every file's name and bytes under dir.
func treeDigest(t *testing.T, dir string) [32]byte {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		h.Write([]byte(path))
		h.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return [32]byte(h.Sum(nil))
}

func TestASecondBrokerOnALockedDataDirectoryIsRefused(t *testing.T) {
	dir := t.TempDir()
	first, err := brokerOn(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Stop(context.Background())
	ctx := context.Background()
	cl, err := client.Dial(ctx, first.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	s := client.Stream{Tenant: "t", Namespace: "n", Name: "s"}
	if _, err := cl.CreateStream(ctx, s, client.StreamConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Publish(ctx, s, []byte("first")); err != nil {
		t.Fatal(err)
	}
	second, err := brokerOn(t, dir)
	if err == nil {
		second.Stop(context.Background())
		t.Fatal("a second broker opened a data directory in use")
	}
	if !errors.Is(err, datadir.ErrLocked) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Fatalf("the refusal does not name the directory and the pid: %v", err)
	}
	if pos, err := cl.Publish(ctx, s, []byte("second")); err != nil || pos.Offset != 1 {
		t.Fatalf("the first broker after the refusal: %+v %v", pos, err)
	}
}

func TestLogVerifyAndDumpOnALockedDataDirectoryOnlyRead(t *testing.T) {
	dir := t.TempDir()
	b, err := brokerOn(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cl, err := client.Dial(ctx, b.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := client.Stream{Tenant: "t", Namespace: "n", Name: "s"}
	if _, err := cl.CreateStream(ctx, s, client.StreamConfig{Fsync: client.Fsync{Kind: client.FsyncOnCommit}}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a", "b", "c"} {
		if _, err := cl.Publish(ctx, s, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	// The directory held as a running broker holds it, with nobody writing.
	held, err := datadir.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	shard := filepath.Join(dir, "streams", "t", "n", "s", "shard-0000")
	before := treeDigest(t, dir)
	out, err := runCLI(t, "log", "verify", shard)
	if err != nil {
		t.Fatalf("verify on a locked directory: %v\n%s", err, out)
	}
	contains(t, out, "3 records")
	if out, err = runCLI(t, "log", "dump", shard); err != nil {
		t.Fatalf("dump on a locked directory: %v\n%s", err, out)
	}
	contains(t, out, `"c"`)
	if treeDigest(t, dir) != before {
		t.Fatal("verify or dump wrote to the data directory")
	}
}
