package main

// serveSettings are the broker's settings, in the order --print-config
// shows them.
func serveSettings() *settings {
	return newSettings([]setting{
		{key: "addr", envs: []string{"FELIX_ADDR"}, def: "127.0.0.1:7117", help: "address clients connect to"},
		{key: "admin-addr", envs: []string{"FELIX_ADMIN_ADDR"}, def: "127.0.0.1:7118", help: "HTTP address of /metrics, /healthz, /readyz and, in a cluster, /cluster (empty: off)"},
		{key: "data", envs: []string{"FELIX_DATA", "FELIX_DURABLE_STORAGE_DIR"}, def: "./felix-data", help: "data directory (empty: memory only, durable streams refused)"},
		{key: "fsync", envs: []string{"FELIX_FSYNC"}, def: "periodic:100ms", help: "default FsyncMode: none, periodic[:interval], on_commit"},
		{key: "retention-max-age", envs: []string{"FELIX_DURABLE_RETENTION_MAX_AGE"}, def: "0", help: "default retention by age (0: unbounded), e.g. 168h"},
		{key: "retention-max-bytes", envs: []string{"FELIX_DURABLE_RETENTION_MAX_BYTES"}, def: "0", help: "default retention by size per shard, bytes (0: unbounded)"},
		{key: "dead-letter-max-age", envs: []string{"FELIX_DEAD_LETTER_MAX_AGE"}, def: "0", help: "how long consumer groups keep a dead letter (0: until redriven), e.g. 336h"},
		{key: "segment-bytes", envs: []string{"FELIX_SEGMENT_BYTES"}, def: "67108864", help: "segment size in bytes"},
		{key: "io", envs: []string{"FELIX_IO"}, def: "auto", help: "IO path: auto, uring, portable"},
		{key: "max-frame-bytes", envs: []string{"FELIX_MAX_FRAME_BYTES"}, def: "4194304", help: "largest frame a client may send"},
		{key: "handshake-timeout", envs: []string{"FELIX_HANDSHAKE_TIMEOUT"}, def: "5s", help: "close connections that do not say HELLO within this"},
		{key: "idle-timeout", envs: []string{"FELIX_IDLE_TIMEOUT"}, def: "5m", help: "close connections idle this long"},
		{key: "frame-timeout", envs: []string{"FELIX_FRAME_TIMEOUT"}, def: "30s", help: "close connections whose frame is not whole this long after its first byte (negative: never)"},
		{key: "max-connections", envs: []string{"FELIX_MAX_CONNECTIONS"}, def: "4096", help: "open client connections at most, auth on or off; more are refused (overloaded)"},
		{key: "max-inbound-bytes", envs: []string{"FELIX_MAX_INBOUND_BYTES"}, def: "268435456", help: "bytes the unfinished frames of all connections may hold together; past it connections are shed"},
		{key: "event-loops", envs: []string{"FELIX_EVENT_LOOPS"}, def: "0", help: "network event loops (0: one per processor but one, at least one)"},
		{key: "auth-keys", envs: []string{"FELIX_AUTH_KEYS"}, def: "", help: "files of trusted token public keys, comma-separated (empty: auth off)"},
		{key: "tls-addr", envs: []string{"FELIX_TLS_ADDR"}, def: "", help: "address of the TLS listener (empty: none)"},
		{key: "tls-cert", envs: []string{"FELIX_TLS_CERT"}, def: "", help: "PEM certificate (chain) of the TLS listener"},
		{key: "tls-key", envs: []string{"FELIX_TLS_KEY"}, def: "", help: "PEM private key of the TLS listener"},
		{key: "quota-publish-bytes-per-sec", envs: []string{"FELIX_QUOTA_PUBLISH_BYTES_PER_SEC"}, def: "0", help: "default per-tenant publish rate, bytes/s (0: unlimited)"},
		{key: "quota-connections", envs: []string{"FELIX_QUOTA_CONNECTIONS"}, def: "0", help: "default per-tenant open connections, with auth on (0: unlimited)"},
		{key: "quota-stored-bytes", envs: []string{"FELIX_QUOTA_STORED_BYTES"}, def: "0", help: "default per-tenant stored bytes (0: unlimited)"},
		{key: "broker-id", envs: []string{"FELIX_BROKER_ID"}, def: "", help: "this broker's id, unique in its cluster (empty: felix-1 for a cluster of one; required with --etcd-endpoints, and one of --cluster's names)"},
		{key: "rack", envs: []string{"FELIX_RACK"}, def: "", help: "this broker's failure domain: replicas are placed on distinct racks (empty: unlabelled)"},
		{key: "peer-addr", envs: []string{"FELIX_PEER_ADDR"}, def: "", help: "address of the listener for other brokers (empty: --addr's host, loopback for a wildcard, its port + 2: 127.0.0.1:7119)"},
		{key: "advertise-addr", envs: []string{"FELIX_ADVERTISE_ADDR"}, def: "", help: "client address other brokers and clients are given (empty: the bound --addr)"},
		{key: "advertise-peer-addr", envs: []string{"FELIX_ADVERTISE_PEER_ADDR"}, def: "", help: "peer address other brokers dial (empty: the bound --peer-addr)"},
		{key: "cluster", envs: []string{"FELIX_CLUSTER"}, def: "", help: "embedded etcd members, name=host:port,... (etcd peer addresses, one per broker, this broker's among them; empty: a cluster of one)"},
		{key: "etcd-client-addr", envs: []string{"FELIX_ETCD_CLIENT_ADDR"}, def: "127.0.0.1:0", help: "where the embedded etcd member serves etcd clients (etcdctl)"},
		{key: "etcd-endpoints", envs: []string{"FELIX_ETCD_ENDPOINTS"}, def: "", help: "an external etcd's client URLs, comma-separated, in place of an embedded member"},
		{key: "etcd-prefix", envs: []string{"FELIX_ETCD_PREFIX"}, def: "", help: "prefix of every key in the external etcd, for several clusters on one"},
		{key: "shard-lease", envs: []string{"FELIX_SHARD_LEASE"}, def: "0", help: "lease of a replicated shard's leader; a dead or frozen one is replaced about 1.5 leases after (0: 4s)"},
		{key: "publish-timeout", envs: []string{"FELIX_PUBLISH_TIMEOUT"}, def: "0", help: "a replicated publish's wait for its acknowledgement, then refused no_quorum or not_leader (0: 5s)"},
		{key: "log-format", envs: []string{"FELIX_LOG_FORMAT"}, def: "auto", help: "auto (text on a terminal, JSON otherwise), text, json"},
		{key: "log-level", envs: []string{"FELIX_LOG_LEVEL"}, def: "info", help: "debug, info, warn, error"},
	})
}
