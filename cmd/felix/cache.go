package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/units"
)

// The most a value read from standard input may hold; the broker's frame
// limit (4 MiB by default) bounds it again.
const stdinValueBytesMax = 64 << 20

type cacheCmd struct {
	Create   cacheCreateCmd   `cmd:"" help:"Create a cache."`
	Drop     cacheDropCmd     `cmd:"" help:"Drop a cache with its values and counters."`
	Describe cacheDescribeCmd `cmd:"" help:"Print a cache's settings and each shard's leader and replicas."`
	Get      cacheGetCmd      `cmd:"" help:"Print a key's value."`
	Put      cachePutCmd      `cmd:"" help:"Write a key's value (the argument, or standard input)."`
	Del      cacheDelCmd      `cmd:"" help:"Delete a key's value."`
	Watch    cacheWatchCmd    `cmd:"" help:"Print the writes of a key or prefix as they happen, until interrupted."`
}

// cacheArg is the cache every cache command names first.
type cacheArg struct {
	brokerFlags
	Cache string `arg:"" help:"[tenant/]namespace/name"`
}

// open dials the broker and returns the cache's handle.
func (a *cacheArg) open(ctx context.Context) (*client.ClusterClient, *client.ClusterCache, error) {
	s, err := a.stream(a.Cache)
	if err != nil {
		return nil, nil, fmt.Errorf("cache %q: write namespace/name or tenant/namespace/name", a.Cache)
	}
	cl, err := a.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	return cl, cl.Cache(client.CacheName(s)), nil
}

// run dials the broker, calls do with the cache's handle within the
// command's timeout, and closes the connection.
func (a *cacheArg) run(do func(ctx context.Context, ca *client.ClusterCache) error) error {
	ctx, cancel := a.context()
	defer cancel()
	cl, ca, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer cl.Close()
	return missingCache(do(ctx, ca), ca.Name())
}

type cacheCreateCmd struct {
	cacheArg
	Shards            int            `help:"Number of shards; a key's hash picks its shard." default:"1"`
	ReplicationFactor int            `help:"Replicas of each shard, the leader included (above 1: a cluster, durable)." default:"1"`
	Durable           bool           `help:"Keep the cache's log on disk (--no-durable: in the broker's memory)." default:"true" negatable:""`
	Fsync             string         `help:"none, periodic[:interval], on_commit, as felix serve's --fsync (default: the broker's)." default:""`
	FsyncInterval     units.Duration `help:"Periodic fsync interval, when --fsync periodic names none (0: the broker's)." default:"0s"`
	Consistency       string         `help:"When a replicated cache's writes are acknowledged: leader (its shard's leader has them) or quorum (a majority of the replicas does)." enum:"leader,quorum,Leader,Quorum" default:"leader"`
}

func (c *cacheCreateCmd) Run() error {
	if c.Shards < 1 {
		return fmt.Errorf("--shards %d: a cache has at least 1 shard", c.Shards)
	}
	fsync, err := fsyncFlag(c.Fsync, time.Duration(c.FsyncInterval))
	if err != nil {
		return err
	}
	cons := client.ConsistencyLeader
	if strings.EqualFold(c.Consistency, "quorum") {
		cons = client.ConsistencyQuorum
	}
	cfg := client.CacheConfig{Shards: c.Shards, ReplicationFactor: c.ReplicationFactor, InMemory: !c.Durable, Fsync: fsync,
		Consistency: cons}
	return c.run(func(ctx context.Context, ca *client.ClusterCache) error {
		if err := ca.Create(ctx, cfg); err != nil {
			return err
		}
		fmt.Printf("created cache %s (shards %d, replication %d, durable %v, fsync %s, consistency %s)\n", ca.Name(), max(c.Shards, 1),
			max(c.ReplicationFactor, 1), c.Durable, fsyncString(cfg.Fsync), cons)
		return nil
	})
}

type cacheDescribeCmd struct {
	cacheArg
}

func (c *cacheDescribeCmd) Run() error {
	return c.run(func(ctx context.Context, ca *client.ClusterCache) error {
		info, err := ca.Describe(ctx)
		if err != nil {
			return err
		}
		printCacheInfo(os.Stdout, info)
		return nil
	})
}

// printCacheInfo prints what Describe answered: the settings on one line,
// then a line per shard.
func printCacheInfo(out io.Writer, info client.CacheInfo) {
	cfg := info.Config
	cons := cfg.Consistency
	if cons == "" {
		cons = client.ConsistencyLeader
	}
	fmt.Fprintf(out, "cache %s: shards %d, replication %d, durable %v, fsync %s, consistency %s\n", info.Name, cfg.Shards,
		max(cfg.ReplicationFactor, 1), !cfg.InMemory, fsyncString(cfg.Fsync), cons)
	for _, sh := range info.Shards {
		leader := sh.LeaderID
		if leader == "" {
			leader = "-"
		}
		fmt.Fprintf(out, "  shard %d: leader %s, generation %d, replicas %s\n", sh.Shard, leader, sh.Generation,
			strings.Join(sh.Replicas, ","))
	}
}

type cacheDropCmd struct {
	cacheArg
}

func (c *cacheDropCmd) Run() error {
	return c.run(func(ctx context.Context, ca *client.ClusterCache) error {
		if err := ca.Drop(ctx); err != nil {
			return err
		}
		fmt.Printf("dropped cache %s\n", ca.Name())
		return nil
	})
}

// errKeyNotFound is cache get's answer for a key with no live value.
var errKeyNotFound = errors.New("no value")

type cacheGetCmd struct {
	cacheArg
	Key  string `arg:"" help:"The key."`
	Meta bool   `help:"Print the value's offset and expiry on a line before it."`
}

func (c *cacheGetCmd) Run() error {
	return c.run(func(ctx context.Context, ca *client.ClusterCache) error {
		it, err := ca.Get(ctx, []byte(c.Key))
		if err != nil {
			return err
		}
		if !it.Found {
			return fmt.Errorf("key %q: %w", c.Key, errKeyNotFound)
		}
		if c.Meta {
			fmt.Printf("offset %d  expires %s\n", it.Offset, expiryString(it.ExpiresAt))
		}
		_, err = fmt.Printf("%s\n", it.Value)
		return err
	})
}

func expiryString(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

type cachePutCmd struct {
	cacheArg
	Key       string        `arg:"" help:"The key."`
	Value     *string       `arg:"" optional:"" help:"The value; read from standard input when left out."`
	TTL       time.Duration `name:"ttl" help:"Expire the value this long after the broker applies the put (at least 1ms)."`
	ExpiresAt string        `name:"expires-at" help:"Expire the value at this time (RFC 3339)."`
	IfAbsent  bool          `name:"if-absent" help:"Write only if the key holds no value." xor:"cond"`
	IfOffset  *int64        `name:"if-offset" help:"Write only if the key's value was written at this offset (compare and set)." xor:"cond"`
}

func (c *cachePutCmd) Run() error {
	value, err := c.value()
	if err != nil {
		return err
	}
	opts, err := c.options()
	if err != nil {
		return err
	}
	return c.run(func(ctx context.Context, ca *client.ClusterCache) error {
		var w client.Written
		switch {
		case c.IfAbsent:
			w, err = ca.PutIfAbsent(ctx, []byte(c.Key), value, opts...)
		case c.IfOffset != nil:
			w, err = ca.PutIfOffset(ctx, []byte(c.Key), value, *c.IfOffset, opts...)
		default:
			w, err = ca.Put(ctx, []byte(c.Key), value, opts...)
		}
		if err != nil {
			return err
		}
		fmt.Printf("put %q at offset %d (%s, expires %s)\n", c.Key, w.Offset, replaced(w.Existed), expiryString(w.ExpiresAt))
		return nil
	})
}

func (c *cachePutCmd) value() ([]byte, error) {
	if c.Value != nil {
		return []byte(*c.Value), nil
	}
	b, err := io.ReadAll(io.LimitReader(os.Stdin, stdinValueBytesMax+1))
	if err != nil {
		return nil, fmt.Errorf("reading the value from standard input: %w", err)
	}
	if len(b) > stdinValueBytesMax {
		return nil, fmt.Errorf("the value on standard input is over %d bytes", stdinValueBytesMax)
	}
	return b, nil
}

func (c *cachePutCmd) options() ([]client.PutOption, error) {
	switch {
	case c.TTL != 0 && c.ExpiresAt != "":
		return nil, errors.New("--ttl and --expires-at exclude each other")
	case c.TTL != 0:
		return []client.PutOption{client.WithTTL(c.TTL)}, nil
	case c.ExpiresAt != "":
		at, err := time.Parse(time.RFC3339Nano, c.ExpiresAt)
		if err != nil {
			return nil, fmt.Errorf("--expires-at: %w", err)
		}
		return []client.PutOption{client.WithExpiresAt(at)}, nil
	}
	return nil, nil
}

func replaced(existed bool) string {
	if existed {
		return "replaced a value"
	}
	return "new"
}

type cacheDelCmd struct {
	cacheArg
	Key      string `arg:"" help:"The key."`
	IfOffset *int64 `name:"if-offset" help:"Delete only if the key's value was written at this offset."`
}

func (c *cacheDelCmd) Run() error {
	return c.run(func(ctx context.Context, ca *client.ClusterCache) error {
		var w client.Written
		var err error
		if c.IfOffset != nil {
			w, err = ca.DeleteIfOffset(ctx, []byte(c.Key), *c.IfOffset)
		} else {
			w, err = ca.Delete(ctx, []byte(c.Key))
		}
		if err != nil {
			return err
		}
		if !w.Existed {
			fmt.Printf("%q held no value; nothing written\n", c.Key)
			return nil
		}
		fmt.Printf("deleted %q at offset %d\n", c.Key, w.Offset)
		return nil
	})
}

type cacheWatchCmd struct {
	cacheArg
	Key      string `arg:"" help:"The key, or with --prefix the prefix."`
	Prefix   bool   `help:"Watch every key starting with KEY, on every shard (each line names its shard), or on --shard."`
	Shard    int    `help:"The one shard a prefix watch reads (default: every shard)." default:"-1"`
	Retained bool   `help:"Print each matching key's current value first, then the changes."`
	From     *int64 `help:"Resume at this offset (a previous watch's last offset + 1)." xor:"start"`
}

func (c *cacheWatchCmd) Run() error {
	if c.Retained && c.From != nil {
		return errors.New("--retained and --from exclude each other")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dialCtx, cancel := c.context()
	defer cancel()
	cl, ca, err := c.open(dialCtx)
	if err != nil {
		return err
	}
	defer cl.Close()
	start := ca.Watch
	if c.Retained {
		start = ca.WatchRetained
	}
	var resume []client.WatchOption
	if c.From != nil {
		resume = append(resume, client.WithResumeAt(*c.From))
	}
	if !c.Prefix {
		w, err := start(dialCtx, []byte(c.Key), resume...)
		if err != nil {
			return missingCache(err, ca.Name())
		}
		defer w.Close()
		return printWatch(ctx, w, os.Stdout)
	}
	shards := []int{c.Shard}
	if c.Shard < 0 {
		if c.From != nil {
			return errors.New("--from resumes one shard's watch: name its --shard")
		}
		info, err := ca.Describe(dialCtx)
		if err != nil {
			return missingCache(err, ca.Name())
		}
		shards = shards[:0]
		for i := range info.Shards {
			shards = append(shards, i)
		}
	}
	watches := make([]*client.ClusterWatch, 0, len(shards))
	for _, sh := range shards {
		w, err := start(dialCtx, []byte(c.Key), append(slices.Clip(resume), client.WithPrefixOnShard(sh))...)
		if err != nil {
			return missingCache(err, ca.Name())
		}
		defer w.Close()
		watches = append(watches, w)
	}
	if len(watches) == 1 {
		return printWatch(ctx, watches[0], os.Stdout)
	}
	return printWatches(ctx, watches, os.Stdout)
}

// printWatches prints the events of one prefix watch per shard as they
// come, each line naming its shard, until one ends or ctx does.
func printWatches(ctx context.Context, watches []*client.ClusterWatch, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lines, ended := make(chan string), make(chan error, len(watches))
	for _, w := range watches {
		go func() {
			for ev, err := range w.Events(ctx) {
				if err != nil {
					ended <- err
					return
				}
				select {
				case lines <- fmt.Sprintf("shard %d  %s", ev.Shard, watchLine(ev)):
				case <-ctx.Done():
					return
				}
			}
			ended <- nil
		}()
	}
	for {
		select {
		case l := <-lines:
			fmt.Fprintln(out, l)
		case err := <-ended:
			if ctx.Err() != nil {
				fmt.Fprintln(out, "# stopped; a shard's watch resumes with --shard N --from its last offset + 1")
				return nil
			}
			return err
		case <-ctx.Done():
			fmt.Fprintln(out, "# stopped; a shard's watch resumes with --shard N --from its last offset + 1")
			return nil
		}
	}
}

// watchStream is what printWatch reads: a client.ClusterWatch, or a
// client.Watch.
type watchStream interface {
	Events(ctx context.Context) iter.Seq2[client.WatchEvent, error]
	ResumeOffset() int64
}

// printWatch prints one line per event until the watch ends or ctx does
// (which is not an error: the user interrupted).
func printWatch(ctx context.Context, w watchStream, out io.Writer) error {
	for ev, err := range w.Events(ctx) {
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(out, "# stopped; resume with --from %d\n", w.ResumeOffset())
				return nil
			}
			return err
		}
		fmt.Fprintln(out, watchLine(ev))
	}
	return nil
}

func watchLine(ev client.WatchEvent) string {
	switch ev.Kind {
	case client.WatchPut, client.WatchSnapshot:
		return fmt.Sprintf("%-8s %d\t%s\t%s", ev.Kind, ev.Offset, ev.Key, ev.Value)
	case client.WatchDelete:
		return fmt.Sprintf("%-8s %d\t%s", ev.Kind, ev.Offset, ev.Key)
	case client.WatchSynced:
		return fmt.Sprintf("%-8s %d values", ev.Kind, ev.Count)
	case client.WatchLagged:
		return fmt.Sprintf("%-8s fell behind at %d; resuming from it", ev.Kind, ev.FirstMissed)
	case client.WatchReset:
		return fmt.Sprintf("%-8s the changes since the resume offset were compacted away; current values follow", ev.Kind)
	}
	return ev.Kind.String()
}
