package main

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/felixbroker/felix/client"
)

// /metrics of a running broker counts a publish end to end: the request by
// result, its ack latency, the log's append and fsync, the connection.
func TestMetricsCountAPublishEndToEnd(t *testing.T) {
	flags := map[string]string{"addr": "127.0.0.1:0", "admin-addr": "127.0.0.1:0", "data": t.TempDir(),
		"fsync": "on_commit", "log-format": "text", "log-level": "error"}
	cfg := configOf(t, flags)
	b, err := startBroker(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer b.Stop(ctx)
	cl, err := client.Dial(ctx, b.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	s := client.Stream{Tenant: "t", Namespace: "n", Name: "s"}
	if _, err := cl.CreateStream(ctx, s, client.StreamConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Publish(ctx, s, []byte("x")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + b.AdminAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	contains(t, string(body),
		"# TYPE felix_publish_requests_total counter",
		`felix_publish_requests_total{result="ok"} 1`,
		"felix_publish_ack_duration_seconds_count 1",
		"felix_log_appended_records_total 1",
		"felix_log_fsyncs_total 1",
		"felix_connections 1",
		"felix_streams 1",
		`felix_build_info{version="`+version+`"`)
}
