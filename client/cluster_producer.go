package client

// Producer returns an idempotent producer for stream over the cluster:
// each shard's batches go to that shard's leader (following its
// not_leader redirect), and a batch whose answer was lost is sent again
// with the same sequence, wherever the shard's leader now is. The leader
// that took the first copy answers a re-send from memory, so the batch
// lands once; a new leader knows no producers, so a batch in flight
// across a failover is reported as an *UnknownOutcomeError
// (ErrUnknownOutcome), never landed twice nor dropped silently, and the
// shard starts again under a new producer id. Nothing is sent until the
// first batch.
func (c *ClusterClient) Producer(stream Stream) *Producer {
	return &Producer{cluster: c, stream: stream, shards: map[uint32]*producerShard{}}
}
