package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/units"
)

type streamCmd struct {
	Create   streamCreateCmd   `cmd:"" help:"Create a stream."`
	List     streamListCmd     `cmd:"" help:"List the streams of a namespace."`
	Describe streamDescribeCmd `cmd:"" help:"Show a stream's settings and, per shard, its leader, replicas, offsets, bytes, record times and consumer groups."`
	Delete   streamDeleteCmd   `cmd:"" help:"Delete a stream and its records."`
}

type streamCreateCmd struct {
	brokerFlags
	Stream            string         `arg:"" help:"[tenant/]namespace/name"`
	Shards            int            `help:"Number of shards; a record's key picks its shard." default:"1"`
	Durable           bool           `help:"Keep records on disk (--no-durable: a bounded in-memory log)." default:"true" negatable:""`
	Fsync             string         `help:"none, periodic[:interval], on_commit, as felix serve's --fsync (default: the broker's)." default:""`
	FsyncInterval     units.Duration `help:"Periodic fsync interval, when --fsync periodic names none (0: the broker's)." default:"0s"`
	Consistency       string         `help:"Leader or Quorum." enum:"Leader,Quorum" default:"Leader"`
	ReplicationFactor int            `help:"Replicas, the leader included." default:"1"`
	RetentionMaxAge   units.Duration `help:"Remove records older than this, e.g. 7d (0: the broker's setting)." default:"0s"`
	RetentionMaxBytes units.Bytes    `help:"Keep at most this much per shard, e.g. 10GiB (0: the broker's setting)." default:"0"`
	Kind              string         `help:"Stream, Queue or Cache: stored and reported, not enforced." enum:"Stream,Queue,Cache" default:"Stream"`
	Delivery          string         `help:"AtMostOnce or AtLeastOnce: stored and reported, not enforced." enum:"AtMostOnce,AtLeastOnce" default:"AtMostOnce"`
}

func (c *streamCreateCmd) Run() error {
	s, err := c.stream(c.Stream)
	if err != nil {
		return err
	}
	if c.Shards < 1 {
		return fmt.Errorf("--shards %d: a stream has at least 1 shard", c.Shards)
	}
	fsync, err := fsyncFlag(c.Fsync, time.Duration(c.FsyncInterval))
	if err != nil {
		return err
	}
	cfg := client.StreamConfig{Shards: c.Shards, InMemory: !c.Durable, Consistency: client.Consistency(c.Consistency),
		ReplicationFactor: c.ReplicationFactor, Kind: client.StreamKind(c.Kind), Delivery: client.Delivery(c.Delivery),
		Retention: client.Retention{MaxAge: time.Duration(c.RetentionMaxAge), MaxBytes: uint64(c.RetentionMaxBytes)},
		Fsync:     fsync}
	return c.withClient(func(ctx context.Context, cl *client.ClusterClient) error {
		info, err := cl.CreateStream(ctx, s, cfg)
		if err == nil {
			printStreamInfo(info, nil)
		}
		return err
	})
}

type streamListCmd struct {
	brokerFlags
	Namespace string `arg:"" optional:"" help:"Namespace to list (default: all of the tenant's)."`
}

func (c *streamListCmd) Run() error {
	return c.withClient(func(ctx context.Context, cl *client.ClusterClient) error {
		streams, err := cl.ListStreams(ctx, c.tenant(), c.Namespace)
		for _, s := range streams {
			fmt.Println(s.String())
		}
		return err
	})
}

type streamDescribeCmd struct {
	brokerFlags
	Stream string `arg:"" help:"[tenant/]namespace/name"`
	JSON   bool   `name:"json" help:"Print JSON."`
}

// Run asks each shard's leader for its figures (DescribeStreamShards) and
// for the consumer groups reading the shard (stream_describe.go).
func (c *streamDescribeCmd) Run() error {
	s, err := c.stream(c.Stream)
	if err != nil {
		return err
	}
	return c.withClient(func(ctx context.Context, cl *client.ClusterClient) error {
		info, err := cl.DescribeStreamShards(ctx, s)
		if err != nil && len(info.Shards) == 0 {
			return missingStream(err, s)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "felix: %s (that shard's figures are left out)\n", explain(err))
		}
		groups := groupsOf(ctx, cl, info)
		if c.JSON {
			return printStreamJSON(os.Stdout, info, groups)
		}
		printStreamInfo(info, groups)
		return nil
	})
}

type streamDeleteCmd struct {
	brokerFlags
	Stream string `arg:"" help:"[tenant/]namespace/name"`
}

func (c *streamDeleteCmd) Run() error {
	s, err := c.stream(c.Stream)
	if err != nil {
		return err
	}
	return c.withClient(func(ctx context.Context, cl *client.ClusterClient) error {
		if err := cl.DeleteStream(ctx, s); err != nil {
			return missingStream(err, s)
		}
		fmt.Printf("deleted %s\n", s)
		return nil
	})
}

// printStreamInfo prints a stream's settings and a line per shard; groups
// (per shard, nil for none known) fill the GROUPS column.
func printStreamInfo(info client.StreamInfo, groups map[int][]string) {
	c := info.Config
	fmt.Printf("stream %s\n  shards %d  durable %v  consistency %s  replication %d  fsync %s  kind %s  delivery %s\n",
		info.Stream, c.Shards, !c.InMemory, c.Consistency, c.ReplicationFactor, fsyncString(c.Fsync), c.Kind, c.Delivery)
	if c.Retention.MaxAge > 0 || c.Retention.MaxBytes > 0 {
		fmt.Printf("  retention: max age %s, max bytes %d\n", c.Retention.MaxAge, c.Retention.MaxBytes)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  SHARD\tLEADER\tREPLICAS\tGENERATION\tFIRST\tNEXT\tHELD\tBYTES\tOLDEST\tNEWEST\tGROUPS")
	for _, s := range info.Shards {
		replicas := strings.Join(s.Replicas, ",")
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", s.Shard, orDash(s.LeaderID), orDash(replicas), s.Generation,
			s.FirstOffset, s.NextOffset, max(s.NextOffset-s.FirstOffset, 0), bytesText(s.Bytes),
			timeText(s.FirstTime), timeText(s.LastTime), orDash(strings.Join(groups[s.Shard], ",")))
	}
	tw.Flush()
	fmt.Printf("  %d shards; HELD is the offsets retention keeps (records, and a replicated shard's leader marks);\n"+
		"  OLDEST and NEWEST are record times; GROUPS the consumer groups reading the shard\n", len(info.Shards))
}

func fsyncString(f client.Fsync) string {
	if f.Kind == "" {
		return "broker default"
	}
	if f.Kind == client.FsyncPeriodic && f.Interval > 0 {
		return fmt.Sprintf("%s:%s", f.Kind, f.Interval)
	}
	return string(f.Kind)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
