package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/felixbroker/felix/client"
)

type groupCmd struct {
	Poll     groupPollCmd     `cmd:"" help:"Take records from a group: print them with their offsets, and ack them with --ack."`
	Ack      groupAckCmd      `cmd:"" help:"Ack records a consumer was handed (or give them back with --nack)."`
	List     groupListCmd     `cmd:"" help:"List the groups of a shard, with where each stands."`
	Describe groupDescribeCmd `cmd:"" help:"Show where a group stands: cursor, in flight, owed, dead letters, retention skips, lag."`
	Dead     groupDeadCmd     `cmd:"" help:"List a group's dead letters."`
	Redrive  groupRedriveCmd  `cmd:"" help:"Make dead letters owed again (all of them, or the offsets given)."`
}

// groupFlags name one group and the consumer the command speaks for.
type groupFlags struct {
	brokerFlags
	Stream   string `arg:"" help:"[tenant/]namespace/name"`
	Group    string `arg:"" help:"Group name."`
	Shard    int    `help:"The shard (a group's state is per shard; default: every shard for poll, the stream's only shard otherwise)." default:"-1"`
	Consumer string `help:"Consumer name: claims belong to it, so a later ack must give the same one." default:"felix-cli"`
}

// open dials and returns the group, within the command's timeout.
func (g *groupFlags) open(timeout time.Duration) (*client.ClusterClient, *client.ClusterGroup, context.Context, context.CancelFunc, error) {
	s, err := g.stream(g.Stream)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	cl, err := g.dial(ctx)
	if err != nil {
		cancel()
		return nil, nil, nil, nil, err
	}
	shard, err := oneShard(ctx, cl, s, g.Shard)
	if err != nil {
		cl.Close()
		cancel()
		return nil, nil, nil, nil, err
	}
	return cl, cl.Group(s, shard, g.Group, client.WithConsumer(g.Consumer)), ctx, cancel, nil
}

// oneShard is the shard given, else the stream's only one: a command on
// one shard's group of a stream of several must name it.
func oneShard(ctx context.Context, cl *client.ClusterClient, s client.Stream, shard int) (int, error) {
	if shard >= 0 {
		return shard, nil
	}
	info, err := cl.DescribeStream(ctx, s)
	if err != nil {
		return 0, missingStream(err, s)
	}
	if len(info.Shards) != 1 {
		return 0, fmt.Errorf("%s has %d shards, each with its own state of the group: name one with --shard (0 to %d)",
			s, len(info.Shards), len(info.Shards)-1)
	}
	return 0, nil
}

type groupPollCmd struct {
	groupFlags
	Max   int           `help:"Most records to take." default:"10"`
	Wait  time.Duration `help:"How long to wait for a record when none is owed." default:"0s"`
	Claim time.Duration `help:"How long the records stay claimed (0: the broker's default, 30s)." default:"0s"`
	Ack   bool          `help:"Ack the records once printed."`
	JSON  bool          `name:"json" help:"One JSON object a record."`
}

func (c *groupPollCmd) Run() error {
	s, err := c.stream(c.Stream)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.Wait+c.Timeout)
	defer cancel()
	cl, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	shards, err := shardsOf(ctx, cl, s, c.Shard)
	if err != nil {
		return err
	}
	group := func(shard int) *client.ClusterGroup {
		return cl.Group(s, shard, c.Group, client.WithConsumer(c.Consumer), client.WithClaim(c.Claim))
	}
	ms, err := pollShards(ctx, group, shards, c.Max, c.Wait)
	if err != nil {
		return missingStream(err, s)
	}
	printMessages(os.Stdout, ms, c.JSON)
	if len(ms) == 0 {
		fmt.Fprintln(os.Stderr, "no records")
		return nil
	}
	byShard := map[int][]client.Message{}
	for _, m := range ms {
		byShard[m.Shard] = append(byShard[m.Shard], m)
	}
	for _, sh := range shards {
		got := byShard[sh]
		if len(got) == 0 {
			continue
		}
		if !c.Ack {
			fmt.Fprintf(os.Stderr, "%d records of shard %d claimed by %s; ack them with felix group ack %s %s --shard %d%s %s\n",
				len(got), sh, c.Consumer, c.Stream, c.Group, sh, consumerFlag(c.Consumer), offsetList(got))
			continue
		}
		offsets := make([]int64, len(got))
		for i, m := range got {
			offsets[i] = m.Offset
		}
		if err := group(sh).Ack(ctx, offsets...); err != nil {
			return err
		}
	}
	return nil
}

// pollShards takes up to max records from the shards' groups, in shard
// order; it waits (up to wait, shared among them) only when none had one.
func pollShards(ctx context.Context, group func(int) *client.ClusterGroup, shards []int, max int, wait time.Duration) ([]client.Message, error) {
	var out []client.Message
	for _, w := range []time.Duration{0, wait / time.Duration(len(shards))} {
		for _, sh := range shards {
			if len(out) >= max {
				return out, nil
			}
			ms, err := group(sh).Poll(ctx, max-len(out), w)
			if err != nil {
				return out, err
			}
			out = append(out, ms...)
		}
		if len(out) > 0 || wait <= 0 {
			return out, nil
		}
	}
	return out, nil
}

type messageJSON struct {
	Shard      int       `json:"shard"`
	Offset     int64     `json:"offset"`
	Deliveries uint32    `json:"deliveries"`
	Time       time.Time `json:"time"`
	bytesJSON
}

func printMessages(w io.Writer, ms []client.Message, asJSON bool) {
	for _, m := range ms {
		if asJSON {
			b, _ := json.Marshal(messageJSON{Shard: m.Shard, Offset: m.Offset, Deliveries: m.Deliveries,
				Time: m.Timestamp.UTC(), bytesJSON: bytesOf(m.Key, m.Value)})
			fmt.Fprintf(w, "%s\n", b)
			continue
		}
		again := ""
		if m.Deliveries > 1 {
			again = fmt.Sprintf(" (delivery %d)", m.Deliveries)
		}
		if len(m.Key) > 0 {
			fmt.Fprintf(w, "[%d:%d]%s key=%q %s\n", m.Shard, m.Offset, again, m.Key, m.Value)
			continue
		}
		fmt.Fprintf(w, "[%d:%d]%s %s\n", m.Shard, m.Offset, again, m.Value)
	}
}

func offsetList(ms []client.Message) string {
	out := ""
	for i, m := range ms {
		if i > 0 {
			out += " "
		}
		out += strconv.FormatInt(m.Offset, 10)
	}
	return out
}

type groupAckCmd struct {
	groupFlags
	Offsets []int64       `arg:"" help:"Offsets to ack."`
	Nack    bool          `help:"Give the records back instead: owed again after --delay."`
	Delay   time.Duration `help:"With --nack: how long before the records are owed again." default:"0s"`
}

func (c *groupAckCmd) Run() error {
	cl, g, ctx, cancel, err := c.open(c.Timeout)
	if err != nil {
		return err
	}
	defer cancel()
	defer cl.Close()
	if c.Nack {
		err = g.Nack(ctx, c.Delay, c.Offsets...)
	} else {
		err = g.Ack(ctx, c.Offsets...)
	}
	if err != nil {
		return err
	}
	fmt.Printf("%d applied\n", len(c.Offsets))
	return nil
}

type groupListCmd struct {
	brokerFlags
	Stream string `arg:"" help:"[tenant/]namespace/name"`
	Shard  int    `help:"The one shard whose groups to list (default: every shard)." default:"-1"`
}

// shardsOf is the shard given (0 or more), else every shard of s.
func shardsOf(ctx context.Context, cl *client.ClusterClient, s client.Stream, shard int) ([]int, error) {
	if shard >= 0 {
		return []int{shard}, nil
	}
	info, err := cl.DescribeStream(ctx, s)
	if err != nil {
		return nil, missingStream(err, s)
	}
	out := make([]int, len(info.Shards))
	for i := range out {
		out[i] = i
	}
	return out, nil
}

func (c *groupListCmd) Run() error {
	s, err := c.stream(c.Stream)
	if err != nil {
		return err
	}
	ctx, cancel := c.context()
	defer cancel()
	cl, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	shards, err := shardsOf(ctx, cl, s, c.Shard)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SHARD\tGROUP\tCURSOR\tLAG\tIN FLIGHT\tOWED\tDEAD")
	for _, sh := range shards {
		names, err := cl.ListGroups(ctx, s, sh)
		if err != nil {
			return missingStream(err, s)
		}
		for _, name := range names {
			info, err := cl.Group(s, sh, name).Describe(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%d\t%s\t%d\t%d\t%d\t%d\t%d\n", sh, name, info.Cursor, info.Lag, info.InFlight, info.Owed, info.DeadLetters)
		}
	}
	return w.Flush()
}

type groupDescribeCmd struct {
	groupFlags
	JSON bool `name:"json" help:"Print JSON."`
}

func (c *groupDescribeCmd) Run() error {
	s, err := c.stream(c.Stream)
	if err != nil {
		return err
	}
	return c.withClient(func(ctx context.Context, cl *client.ClusterClient) error {
		shards, err := shardsOf(ctx, cl, s, c.Shard)
		if err != nil {
			return err
		}
		var infos []client.GroupInfo
		for _, sh := range shards {
			info, err := cl.Group(s, sh, c.Group).Describe(ctx)
			if err != nil {
				return missingStream(err, s)
			}
			infos = append(infos, info)
		}
		if c.JSON {
			var v any = infos
			if len(infos) == 1 {
				v = infos[0]
			}
			b, _ := json.MarshalIndent(v, "", "  ")
			fmt.Printf("%s\n", b)
			return nil
		}
		for i, info := range infos {
			if i > 0 {
				fmt.Println()
			}
			printGroupInfo(os.Stdout, info)
		}
		return nil
	})
}

func printGroupInfo(out io.Writer, info client.GroupInfo) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "group\t%s on %s shard %d\n", info.Group, info.Stream, info.Shard)
	fmt.Fprintf(w, "cursor\t%d\t(every record below is finished)\n", info.Cursor)
	fmt.Fprintf(w, "next\t%d\t(records from here were never handed out)\n", info.NextOffset)
	fmt.Fprintf(w, "end\t%d\n", info.EndOffset)
	fmt.Fprintf(w, "lag\t%d\n", info.Lag)
	fmt.Fprintf(w, "in flight\t%d\t(claimed)\n", info.InFlight)
	fmt.Fprintf(w, "owed\t%d\t(handed out before, owed again)\n", info.Owed)
	fmt.Fprintf(w, "dead letters\t%d\n", info.DeadLetters)
	fmt.Fprintf(w, "retention skips\t%d\t(records removed before the group finished them)\n", info.RetentionSkipped)
	fmt.Fprintf(w, "consumers\t%d\n", info.Consumers)
	fmt.Fprintf(w, "since open\tdelivered %d, redelivered %d, acked %d, nacked %d, lapsed %d, dead-lettered %d, redriven %d\n",
		info.Delivered, info.Redelivered, info.Acked, info.Nacked, info.Lapsed, info.DeadLettered, info.Redriven)
	w.Flush()
}

type groupDeadCmd struct {
	groupFlags
	After *int64 `help:"List from the first dead letter after this offset."`
	Limit int    `help:"Most dead letters to list (0: the broker's page, 1000)." default:"0"`
}

func (c *groupDeadCmd) Run() error {
	cl, g, ctx, cancel, err := c.open(c.Timeout)
	if err != nil {
		return err
	}
	defer cancel()
	defer cl.Close()
	dead, more, err := g.DeadLetters(ctx, c.After, c.Limit)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "OFFSET\tDELIVERIES\tAT\tREASON")
	for _, d := range dead {
		reason := d.Reason
		if d.Detail != "" {
			reason += ": " + d.Detail
		}
		fmt.Fprintf(w, "%d\t%d\t%s\t%s\n", d.Offset, d.Deliveries, d.At.UTC().Format(time.RFC3339), reason)
	}
	w.Flush()
	if more {
		fmt.Fprintf(os.Stderr, "more follow: --after %d\n", dead[len(dead)-1].Offset)
	}
	return nil
}

type groupRedriveCmd struct {
	groupFlags
	Offsets []int64 `arg:"" optional:"" help:"Dead letters to redrive (none: every one)."`
}

func (c *groupRedriveCmd) Run() error {
	cl, g, ctx, cancel, err := c.open(c.Timeout)
	if err != nil {
		return err
	}
	defer cancel()
	defer cl.Close()
	n, notDead, err := g.Redrive(ctx, c.Offsets...)
	if err != nil {
		return err
	}
	fmt.Printf("%d redriven\n", n)
	if len(notDead) > 0 {
		fmt.Printf("not dead letters: %v\n", notDead)
	}
	return nil
}

// consumerFlag is the --consumer an ack of the claims of consumer must
// name: none for the default one.
func consumerFlag(consumer string) string {
	if consumer == "felix-cli" {
		return ""
	}
	return " --consumer " + consumer
}
