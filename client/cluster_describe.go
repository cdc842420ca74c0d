package client

import "context"

// DescribeStreamShards is DescribeStream with each shard's figures as its
// leader holds them: a broker says the offsets, bytes and record times of
// the shards it leads only, so after a describe at any broker each other
// leader is asked once (through the client's routes, following
// not_leader) and its shards' entries taken from its answer. A shard whose
// leader cannot be asked keeps the first answer's entry (figures zero);
// the error is returned beside the info, naming the shard.
func (c *ClusterClient) DescribeStreamShards(ctx context.Context, stream Stream) (StreamInfo, error) {
	info, err := c.DescribeStream(ctx, stream)
	if err != nil {
		return info, err
	}
	asked := map[*Client]StreamInfo{}
	var firstErr error
	for i := range info.Shards {
		var at StreamInfo
		err := c.run(ctx, toShard(stream, i), resendAny, func(ctx context.Context, cl *Client) error {
			if got, ok := asked[cl]; ok {
				at = got
				return nil
			}
			var err error
			if at, err = cl.DescribeStream(ctx, stream); err == nil {
				asked[cl] = at
			}
			return err
		})
		switch {
		case err != nil:
			if firstErr == nil {
				firstErr = &ShardError{Shard: i, Err: err}
			}
		case i < len(at.Shards):
			info.Shards[i] = at.Shards[i]
		}
	}
	return info, firstErr
}
