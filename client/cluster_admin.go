package client

import "context"

// CreateStream creates a stream through any broker (ErrAlreadyExists if
// it exists). It is sent again only after a failure that proves it was
// not applied, so a create that may have landed is returned as is.
func (c *ClusterClient) CreateStream(ctx context.Context, stream Stream, cfg StreamConfig) (StreamInfo, error) {
	var info StreamInfo
	err := c.run(ctx, anyBroker, resendSafe, func(ctx context.Context, cl *Client) error {
		var err error
		info, err = cl.CreateStream(ctx, stream, cfg)
		return err
	})
	if err == nil {
		c.remember(info)
	}
	return info, err
}

// DeleteStream deletes a stream through any broker (ErrNotFound if there
// is none), sent again only as CreateStream is.
func (c *ClusterClient) DeleteStream(ctx context.Context, stream Stream) error {
	err := c.run(ctx, anyBroker, resendSafe, func(ctx context.Context, cl *Client) error {
		return cl.DeleteStream(ctx, stream)
	})
	if err == nil {
		c.forget(streamObject(stream))
	}
	return err
}

// DescribeStream returns a stream's settings and shards, each with its
// leader as the answering broker knows it, and routes by what it says.
// It is retried like any read.
func (c *ClusterClient) DescribeStream(ctx context.Context, stream Stream) (StreamInfo, error) {
	var info StreamInfo
	err := c.run(ctx, anyBroker, resendAny, func(ctx context.Context, cl *Client) error {
		var err error
		info, err = cl.DescribeStream(ctx, stream)
		return err
	})
	if err == nil {
		c.remember(info)
	}
	return info, err
}

// ListStreams lists the streams of a tenant's namespace, retried like any
// read.
func (c *ClusterClient) ListStreams(ctx context.Context, tenant, namespace string) ([]Stream, error) {
	var out []Stream
	err := c.run(ctx, anyBroker, resendAny, func(ctx context.Context, cl *Client) error {
		var err error
		out, err = cl.ListStreams(ctx, tenant, namespace)
		return err
	})
	return out, err
}

// ListGroups lists the consumer groups of one shard, at its leader.
func (c *ClusterClient) ListGroups(ctx context.Context, stream Stream, shard int) ([]string, error) {
	var out []string
	err := c.run(ctx, toShard(stream, shard), resendAny, func(ctx context.Context, cl *Client) error {
		var err error
		out, err = cl.ListGroups(ctx, stream, shard)
		return err
	})
	return out, err
}

// Session describes the connection of the broker in use, dialing one if
// none is up.
func (c *ClusterClient) Session(ctx context.Context) (Session, error) {
	var s Session
	err := c.run(ctx, anyBroker, resendAny, func(ctx context.Context, cl *Client) error {
		var err error
		s, err = cl.Session(ctx)
		return err
	})
	return s, err
}
