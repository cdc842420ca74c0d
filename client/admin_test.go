package client

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/felixbroker/felix/netio/wire"
)

// adminBroker keeps streams in a map, answering the stream control frames.
func adminBroker(t *testing.T) *fakeBroker {
	streams := map[string]wire.StreamInfo{}
	return newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		m := wire.NewControl(f.Type)
		if err := wire.DecodeControl(f, wire.Limits{}, m); err != nil {
			fc.fail(f.RequestID, wire.CodeMalformedFrame, err.Error(), wire.Details{})
			return
		}
		reply := func(m wire.Control) {
			fc.sendWith(func(dst []byte) []byte { return wire.AppendControl(dst, f.RequestID, m) })
		}
		switch m := m.(type) {
		case *wire.StreamCreate:
			key := m.Stream.String()
			if _, ok := streams[key]; ok {
				fc.fail(f.RequestID, wire.CodeAlreadyExists, key, wire.Details{})
				return
			}
			info := wire.StreamInfo{Stream: m.Stream, Config: m.Config}
			for i := range m.Config.Shards {
				info.Shards = append(info.Shards, wire.ShardInfo{Shard: i, LeaderID: "fake-1", Generation: 1, NextOffset: 5})
			}
			streams[key] = info
			reply(&info)
		case *wire.StreamDescribe:
			info, ok := streams[m.Stream.String()]
			if !ok {
				fc.fail(f.RequestID, wire.CodeNotFound, "no stream", wire.Details{})
				return
			}
			reply(&info)
		case *wire.StreamDelete:
			delete(streams, m.Stream.String())
			fc.sendWith(func(dst []byte) []byte { return wire.AppendOK(dst, f.RequestID) })
		case *wire.StreamList:
			var res wire.StreamListResult
			for _, info := range streams {
				res.Streams = append(res.Streams, info.Stream)
			}
			reply(&res)
		}
	})
}

func TestStreamAdministrationRoundTrips(t *testing.T) {
	c := dialFake(t, adminBroker(t))
	ctx := testCtx(t)
	cfg := StreamConfig{Shards: 4, Consistency: ConsistencyQuorum, ReplicationFactor: 3,
		Retention: Retention{MaxAge: 90 * time.Minute, MaxBytes: 1 << 30},
		Fsync:     Fsync{Kind: FsyncPeriodic, Interval: 250 * time.Millisecond},
		Delivery:  DeliveryAtLeastOnce, Kind: KindQueue}
	info, err := c.CreateStream(ctx, testStream, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if info.Stream != testStream || !reflect.DeepEqual(info.Config, cfg) || len(info.Shards) != 4 || info.Shards[3].NextOffset != 5 {
		t.Fatalf("created %+v", info)
	}
	if _, err := c.CreateStream(ctx, testStream, cfg); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	got, err := c.DescribeStream(ctx, testStream)
	if err != nil || !reflect.DeepEqual(got, info) {
		t.Fatalf("describe: %+v %v", got, err)
	}
	list, err := c.ListStreams(ctx, "acme", "prod")
	if err != nil || len(list) != 1 || list[0] != testStream {
		t.Fatalf("list: %v %v", list, err)
	}
	if err := c.DeleteStream(ctx, testStream); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DescribeStream(ctx, testStream); !errors.Is(err, ErrNotFound) {
		t.Fatalf("describe after delete: %v", err)
	}
}

func TestRetentionAgeIsSentInWholeSecondsRoundedUp(t *testing.T) {
	wc, err := StreamConfig{Retention: Retention{MaxAge: 1500 * time.Millisecond}}.wire()
	if err != nil || wc.Retention.MaxAgeSeconds != 2 {
		t.Fatalf("1.5s became %d seconds (%v)", wc.Retention.MaxAgeSeconds, err)
	}
	if _, err := (StreamConfig{Shards: -1}).wire(); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("negative shards: %v", err)
	}
}

func TestAClosedClientRefusesEverything(t *testing.T) {
	c := dialFake(t, adminBroker(t))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	if _, err := c.Publish(ctx, testStream, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("publish after close: %v", err)
	}
	if _, err := c.Subscribe(ctx, testStream, 0, SubscribeOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("subscribe after close: %v", err)
	}
	if _, err := c.PublishAtLeastOnce(ctx, testStream, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("at-least-once after close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal("second close:", err)
	}
}
