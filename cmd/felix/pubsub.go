package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
	"unicode/utf8"

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
				return missingStream(err, s)
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
	Shard  int    `help:"Read this shard only (default: every shard of the stream; each line names its shard)." default:"-1"`
	From   string `help:"latest, earliest, or an offset (on every shard read)." default:"latest"`
	Since  string `help:"Start each shard at its first record at or after a time: a duration ago (10m, 36h, 7d) or an RFC 3339 time (2026-12-01T15:04:05Z); instead of --from." default:""`
	Until  bool   `name:"until-end" help:"Exit once every shard read has reached the end it had when the subscription began (as kcat -e)."`
	Count  int    `help:"Stop after this many records (0: never)." default:"0"`
	JSON   bool   `name:"json" help:"One JSON object a record."`
}

func (c *subCmd) Run() error {
	s, err := c.stream(c.Stream)
	if err != nil {
		return err
	}
	start, err := c.start(time.Now())
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
	events, closeSub, err := c.subscribe(ctx, cl, s, start)
	if err != nil {
		return boundsUnserved(missingStream(err, s))
	}
	defer closeSub()
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	n := 0
	for ev, err := range events {
		if err != nil {
			if errors.Is(err, client.ErrEndReached) {
				fmt.Fprintf(os.Stderr, "reached the end of every shard read (%d records)\n", n)
				return nil
			}
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

// subscribe opens the subscription through the cluster client, which goes
// to each shard's leader (looked up, or named by the not_leader of the
// broker it reached): in a cluster, any broker's address will do. Every
// shard by default (SubscribeSharded: a lost shard is opened again while
// the others go on), --shard N for one.
func (c *subCmd) subscribe(ctx context.Context, cl *client.ClusterClient, s client.Stream, start client.Start) (iter.Seq2[client.Event, error], func() error, error) {
	var until client.Until
	if c.Until {
		until = client.UntilEnd()
	}
	if c.Shard >= 0 {
		sub, err := cl.Subscribe(ctx, s, c.Shard, client.SubscribeOptions{Start: start, Until: until})
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(os.Stderr, "subscribed to %s shard %d from offset %d\n", s, c.Shard, sub.FirstOffset())
		return sub.Events(ctx), sub.Close, nil
	}
	sub, err := cl.SubscribeSharded(ctx, s, client.ShardedOptions{Start: start, Until: until})
	if err != nil {
		return nil, nil, err
	}
	from := c.From
	if c.Since != "" {
		from = "--since " + c.Since
	}
	fmt.Fprintf(os.Stderr, "subscribed to every shard of %s from %s (lines are [shard:offset])\n", s, from)
	return sub.Events(ctx), sub.Close, nil
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
	bytesJSON
	Missed uint64 `json:"missed,omitempty"`
}

// bytesJSON carries a record's key and value without loss: as text when
// they are valid UTF-8, else in base64, which the field's name says.
type bytesJSON struct {
	Key         string `json:"key,omitempty"`
	KeyBase64   string `json:"key_base64,omitempty"`
	Value       string `json:"value"`
	ValueBase64 string `json:"value_base64,omitempty"`
}

func bytesOf(key, value []byte) bytesJSON {
	var b bytesJSON
	if utf8.Valid(key) {
		b.Key = string(key)
	} else {
		b.KeyBase64 = base64.StdEncoding.EncodeToString(key)
	}
	if utf8.Valid(value) {
		b.Value = string(value)
	} else {
		b.ValueBase64 = base64.StdEncoding.EncodeToString(value)
	}
	return b
}

func printEvent(w *bufio.Writer, ev client.Event, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(eventJSON{Shard: ev.Shard, Offset: ev.Offset, Time: ev.Timestamp.UTC(), bytesJSON: bytesOf(ev.Key, ev.Value), Missed: ev.Missed})
		w.Write(append(b, '\n'))
		return
	}
	if ev.Missed > 0 {
		fmt.Fprintf(w, "# %d records missed on shard %d before offset %d (dropped: the subscriber fell behind)\n", ev.Missed, ev.Shard, ev.Offset)
	}
	if len(ev.Key) > 0 {
		fmt.Fprintf(w, "[%d:%d] key=%q %s\n", ev.Shard, ev.Offset, ev.Key, ev.Value)
		return
	}
	fmt.Fprintf(w, "[%d:%d] %s\n", ev.Shard, ev.Offset, ev.Value)
}
