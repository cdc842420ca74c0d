package main

import (
	"bytes"
	"testing"
)

// The CLI reaches a broker's TLS listener with --tls --tls-ca, and a plain
// dial of a TLS listener fails rather than speaking in the clear.
func TestClientCommandsSpeakTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, _ := writeCert(t, dir)
	var log bytes.Buffer
	b := startSecured(t, map[string]string{"tls-addr": "127.0.0.1:0", "tls-cert": certFile, "tls-key": keyFile}, &log)
	addr := b.TLSAddr().String()
	tlsFlags := []string{"--addr", addr, "--tls", "--tls-ca", certFile, "--timeout", "5s"}
	if _, err := runCLI(t, append([]string{"stream", "create", "demo/tls", "--no-durable"}, tlsFlags...)...); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, append([]string{"pub", "demo/tls", "over-tls"}, tlsFlags...)...)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, out, "shard 0 offset 0")
	out, err = runCLI(t, append([]string{"sub", "demo/tls", "--from", "earliest", "--count", "1"}, tlsFlags...)...)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, out, "[0:0] over-tls")
	if _, err := runCLI(t, "stream", "list", "--addr", addr, "--timeout", "2s"); err == nil {
		t.Fatal("a plain dial of the TLS listener succeeded")
	}
}
