package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/felixbroker/felix/client"
)

type pubCmd struct {
	brokerFlags
	Stream string   `arg:"" help:"[tenant/]namespace/name"`
	Values []string `arg:"" optional:"" help:"Values to publish, one record each; none reads lines from standard input."`
	Key    string   `help:"Routing key: the key picks the shard."`
	Ack    string   `help:"per_message, per_batch or none." enum:"per_message,per_batch,none" default:"per_message"`
	Count  int      `help:"Publish each value this many times." default:"1"`
}

func (c *pubCmd) Run() error {
	s, err := c.stream(c.Stream)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cl, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	opts := []client.PublishOption{client.WithAck(ackMode(c.Ack))}
	if c.Key != "" {
		opts = append(opts, client.WithKey([]byte(c.Key)))
	}
	publish := func(v string) error {
		for range c.Count {
			pctx, cancel := context.WithTimeout(ctx, c.Timeout)
			pos, err := cl.Publish(pctx, s, []byte(v), opts...)
			cancel()
			if err != nil {
				return err
			}
			if c.Ack != "none" {
				fmt.Printf("shard %d offset %d\n", pos.Shard, pos.Offset)
			}
		}
		return nil
	}
	if len(c.Values) > 0 {
		for _, v := range c.Values {
			if err := publish(v); err != nil {
				return err
			}
		}
		return nil
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if err := publish(sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}

func ackMode(s string) client.AckMode {
	switch s {
	case "none":
		return client.AckNone
	case "per_batch":
		return client.AckPerBatch
	}
	return client.AckPerMessage
}

type subCmd struct {
	brokerFlags
	Stream string `arg:"" help:"[tenant/]namespace/name"`
	Shard  int    `help:"Shard to read (a subscription reads one)." default:"0"`
	From   string `help:"latest, earliest, or an offset." default:"latest"`
	Count  int    `help:"Stop after this many records (0: never)." default:"0"`
	JSON   bool   `name:"json" help:"One JSON object a record."`
}

func (c *subCmd) Run() error {
	s, err := c.stream(c.Stream)
	if err != nil {
		return err
	}
	start, err := parseStart(c.From)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cl, sub, err := c.subscribe(ctx, s, client.SubscribeOptions{Start: start})
	if err != nil {
		return err
	}
	defer cl.Close()
	defer sub.Close()
	fmt.Fprintf(os.Stderr, "subscribed to %s shard %d from offset %d\n", s, c.Shard, sub.FirstOffset())
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	n := 0
	for ev, err := range sub.Events(ctx) {
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}
		printEvent(w, ev, c.JSON)
		w.Flush()
		if n++; c.Count > 0 && n >= c.Count {
			return nil
		}
	}
	return nil
}

// subscribe subscribes through the cluster client, which goes to the
// shard's leader (looked up, or named by the not_leader of the broker it
// reached): in a cluster, any broker's address will do.
func (c *subCmd) subscribe(ctx context.Context, s client.Stream, opts client.SubscribeOptions) (*client.ClusterClient, *client.Subscription, error) {
	cl, err := c.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	sub, err := cl.Subscribe(ctx, s, c.Shard, opts)
	if err != nil {
		cl.Close()
		return nil, nil, err
	}
	return cl, sub, nil
}

func parseStart(s string) (client.Start, error) {
	switch s {
	case "latest":
		return client.FromLatest(), nil
	case "earliest":
		return client.FromEarliest(), nil
	}
	off, err := strconv.ParseInt(s, 10, 64)
	if err != nil || off < 0 {
		return client.Start{}, fmt.Errorf("--from %q: latest, earliest or an offset", s)
	}
	return client.FromOffset(off), nil
}

type eventJSON struct {
	Shard  int       `json:"shard"`
	Offset int64     `json:"offset"`
	Time   time.Time `json:"time"`
	Key    string    `json:"key,omitempty"`
	Value  string    `json:"value"`
	Missed uint64    `json:"missed,omitempty"`
}

func printEvent(w *bufio.Writer, ev client.Event, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(eventJSON{Shard: ev.Shard, Offset: ev.Offset, Time: ev.Timestamp.UTC(), Key: string(ev.Key), Value: string(ev.Value), Missed: ev.Missed})
		w.Write(append(b, '\n'))
		return
	}
	if ev.Missed > 0 {
		fmt.Fprintf(w, "# %d records missed before offset %d (dropped: the subscriber fell behind)\n", ev.Missed, ev.Offset)
	}
	if len(ev.Key) > 0 {
		fmt.Fprintf(w, "[%d] key=%q %s\n", ev.Offset, ev.Key, ev.Value)
		return
	}
	fmt.Fprintf(w, "[%d] %s\n", ev.Offset, ev.Value)
}
