package e2e

import (
	"crypto/ed25519"
	"testing"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/client"
	"github.com/felixbroker/felix/netio"
)

// unauthorizedPublishForwarded is TestUnauthorizedPublishIsRefused's
// forwarded ingress: two brokers, a publish sent to the one that does not
// lead the shard. A token without the publish permission is refused at the
// ingress; a token the ingress accepts but the leader does not (signed by
// a key only the ingress trusts) is refused by the leader, which verifies
// the credential again, and its unauthenticated answer reaches the client;
// nothing lands; the permitted publish is forwarded and lands.
func unauthorizedPublishForwarded(t *testing.T) {
	cl := newClock()
	shared, ingressOnly := newKey(t, cl), newKey(t, cl)
	c := startCluster(t, 2, func(i int, nc *netio.Config) {
		keys := []ed25519.PublicKey{shared.public()}
		if i == 0 {
			keys = append(keys, ingressOnly.public())
		}
		v, err := auth.NewVerifier(keys, cl.Now)
		if err != nil {
			t.Fatal(err)
		}
		nc.Authenticator = netio.NewTokenAuthenticator(v)
	})
	ingress, leaderBroker := c.brokers[0], c.brokers[1]
	s := testStream(t, "orders")
	admin := dialWith(t, ingress, shared.token("acme", "admin:*", "publish:orders/*", "subscribe:orders/*"))
	if _, err := admin.CreateStream(testCtx(t), s, client.StreamConfig{Shards: 2}); err != nil {
		t.Fatal(err)
	}
	c.waitStream(s, 2)
	id := streamID(s)
	shard := 0
	if c.leader(id, 0) != leaderBroker {
		shard = 1
	}
	if c.leader(id, shard) != leaderBroker {
		t.Fatalf("neither shard is led by %s", leaderBroker.id)
	}
	key := client.WithKey(keyFor("k", shard, 2))

	forbidden := dialWith(t, ingress, shared.token("acme", "subscribe:*", "publish:other/*"))
	_, err := forbidden.Publish(testCtx(t), s, []byte("nope"), key)
	wantCode(t, "a forwarded publish without the permission", err, client.ErrForbidden)

	untrusted := dialWith(t, ingress, ingressOnly.token("acme", "publish:orders/*"))
	_, err = untrusted.Publish(testCtx(t), s, []byte("laundered?"), key)
	wantCode(t, "a forwarded publish the leader cannot verify", err, client.ErrUnauthenticated)

	leaderView := dialWith(t, leaderBroker, shared.token("acme", "admin:*", "subscribe:orders/*"))
	info, err := leaderView.DescribeStream(testCtx(t), s)
	if err != nil {
		t.Fatal(err)
	}
	if n := info.Shards[shard].NextOffset; n != 0 {
		t.Fatalf("%d refused records landed at the leader", n)
	}
	pos, err := admin.Publish(testCtx(t), s, []byte("yes"), key)
	if err != nil || int(pos.Shard) != shard {
		t.Fatalf("the permitted forwarded publish: %+v %v", pos, err)
	}
}

func dialWith(t testing.TB, nd *node, token string) *client.Client {
	t.Helper()
	return nd.dial(t, client.WithToken(token))
}
