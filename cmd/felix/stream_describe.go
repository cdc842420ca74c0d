package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/felixbroker/felix/client"
)

// groupsOf lists the consumer groups of each shard, at its leader. A
// shard that cannot say (a stream kept in memory has no groups, a broker
// without them) is left out: the describe goes on.
func groupsOf(ctx context.Context, cl *client.ClusterClient, info client.StreamInfo) map[int][]string {
	out := map[int][]string{}
	if info.Config.InMemory {
		return out
	}
	for _, sh := range info.Shards {
		if groups, err := cl.ListGroups(ctx, info.Stream, sh.Shard); err == nil && len(groups) > 0 {
			out[sh.Shard] = groups
		}
	}
	return out
}

// streamJSON is felix stream describe --json: snake_case, as every
// command's JSON.
type streamJSON struct {
	Stream            string      `json:"stream"`
	Shards            int         `json:"shards"`
	Durable           bool        `json:"durable"`
	Consistency       string      `json:"consistency,omitempty"`
	ReplicationFactor int         `json:"replication_factor"`
	Fsync             string      `json:"fsync"`
	Kind              string      `json:"kind,omitempty"`
	Delivery          string      `json:"delivery,omitempty"`
	RetentionMaxAge   string      `json:"retention_max_age,omitempty"`
	RetentionMaxBytes uint64      `json:"retention_max_bytes,omitempty"`
	ShardInfo         []shardJSON `json:"shard_info"`
}

type shardJSON struct {
	Shard       int        `json:"shard"`
	LeaderID    string     `json:"leader_id,omitempty"`
	LeaderAddr  string     `json:"leader_addr,omitempty"`
	Replicas    []string   `json:"replicas"`
	Generation  uint64     `json:"generation"`
	FirstOffset int64      `json:"first_offset"`
	NextOffset  int64      `json:"next_offset"`
	Held        int64      `json:"held"`
	Bytes       int64      `json:"bytes"`
	OldestTime  *time.Time `json:"oldest_time,omitempty"`
	NewestTime  *time.Time `json:"newest_time,omitempty"`
	Groups      []string   `json:"groups"`
}

func printStreamJSON(w io.Writer, info client.StreamInfo, groups map[int][]string) error {
	c := info.Config
	v := streamJSON{Stream: info.Stream.String(), Shards: len(info.Shards), Durable: !c.InMemory,
		Consistency: string(c.Consistency), ReplicationFactor: c.ReplicationFactor, Fsync: fsyncString(c.Fsync),
		Kind: string(c.Kind), Delivery: string(c.Delivery), RetentionMaxBytes: c.Retention.MaxBytes,
		ShardInfo: []shardJSON{}}
	if c.Retention.MaxAge > 0 {
		v.RetentionMaxAge = c.Retention.MaxAge.String()
	}
	for _, s := range info.Shards {
		v.ShardInfo = append(v.ShardInfo, shardJSON{Shard: s.Shard, LeaderID: s.LeaderID, LeaderAddr: s.LeaderAddr,
			Replicas: append([]string{}, s.Replicas...), Generation: s.Generation, FirstOffset: s.FirstOffset,
			NextOffset: s.NextOffset, Held: max(s.NextOffset-s.FirstOffset, 0), Bytes: s.Bytes,
			OldestTime: timePtr(s.FirstTime), NewestTime: timePtr(s.LastTime), Groups: append([]string{}, groups[s.Shard]...)})
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// timeText is a record time for the table: UTC to the second, "-" when
// unknown.
func timeText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// bytesText is a size for the table, in the units sizes are written in
// everywhere (KiB, MiB, GiB); "-" for none known.
func bytesText(n int64) string {
	const unit = 1024
	if n <= 0 {
		return "-"
	}
	if n < unit {
		return fmt.Sprintf("%dB", n)
	}
	f, units := float64(n)/unit, []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for ; f >= unit && i < len(units)-1; i++ {
		f /= unit
	}
	return fmt.Sprintf("%.1f%s", f, units[i])
}
