package group

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/felixbroker/felix/engine"
)

// A group of a shard the stream does not have is refused as no such
// shard, naming how many there are, wherever the request lands: not
// redirected to a leader nobody can name.
func TestAGroupOfAShardTheStreamLacksIsNoSuchShard(t *testing.T) {
	f := newFixture(t, Options{})
	f.owner.set(false) // this broker leads nothing
	k := Key{Stream: sid, Shard: 7, Group: "g"}
	_, err := f.m.Poll(context.Background(), PollRequest{Key: k, Consumer: "c", Max: 1})
	if !errors.Is(err, engine.ErrNoShard) || !strings.Contains(err.Error(), "not shard 7") {
		t.Fatalf("a poll of shard 7: %v, want no such shard saying how many there are", err)
	}
}
