package netio

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/felixbroker/felix/auth"
	"github.com/felixbroker/felix/netio/wire"
)

// The actions of the consumer-group frames, on the group's stream.
const (
	ActionGroupConsume  Action = "group.consume"  // GROUP_POLL, GROUP_ACK, GROUP_NACK, GROUP_EXTEND
	ActionGroupDescribe Action = "group.describe" // GROUP_DESCRIBE, GROUP_LIST, GROUP_DEAD_LETTERS
	ActionGroupRedrive  Action = "group.redrive"  // GROUP_REDRIVE
)

// actionTable is THE mapping from what the server checks to the permission
// a token must grant (auth's grammar). The resource is always the
// tenant's "namespace/name", where name is the stream's (publish,
// subscribe, stream admin, groups: a group is read over its stream) or
// the cache's (cache and counter operations: a counter lives beside its
// cache). docs/security.md mirrors this table.
//
// The optional features declare their Actions in their own files; their
// lines here are keyed by the Action's value, so this table does not
// depend on which features are built. An action missing here is refused:
// a frame added without its line is forbidden, never open.
var actionTable = map[Action]auth.Action{
	ActionPublish:        auth.ActionPublish,
	ActionSubscribe:      auth.ActionSubscribe,
	ActionStreamCreate:   auth.ActionAdmin,
	ActionStreamDelete:   auth.ActionAdmin,
	ActionStreamDescribe: auth.ActionAdmin,
	ActionStreamList:     auth.ActionAdmin,
	"cache.create":       auth.ActionAdmin,      // CACHE_CREATE
	"cache.drop":         auth.ActionAdmin,      // CACHE_DROP
	"cache.read":         auth.ActionCacheRead,  // CACHE_GET, CACHE_WATCH
	"cache.write":        auth.ActionCacheWrite, // CACHE_PUT, CACHE_DELETE
	"counter":            auth.ActionCounter,    // COUNTER_ADD, COUNTER_GET
	ActionGroupConsume:   auth.ActionGroup,
	ActionGroupDescribe:  auth.ActionGroup,
	ActionGroupRedrive:   auth.ActionGroup,
	"producer.init":      auth.ActionPublish, // PRODUCER_INIT: only a publisher needs a producer id
}

// PermissionFor is the token permission's action an Action needs, and
// false for an action no permission grants.
func PermissionFor(a Action) (auth.Action, bool) {
	p, ok := actionTable[a]
	return p, ok
}

// Identity is a Principal that came from a token. Besides Allow it says
// which tenant it speaks for (connection quotas count against it), when it
// stops being valid (the connection is closed then) and the raw token,
// which the connection keeps so a forwarded request can carry it to the
// owner, which verifies it again (see Forwarding in the package doc).
type Identity interface {
	Principal
	Tenant() string
	Expires() time.Time // zero: never
	Credential() []byte
}

// TokenAuthenticator is the Authenticator of a broker with auth on: it
// verifies HELLO's token with an auth.Verifier (signature by a trusted
// key, expiry, claims) once per connection. Safe for concurrent use.
type TokenAuthenticator struct {
	v *auth.Verifier
}

// NewTokenAuthenticator authenticates with v.
func NewTokenAuthenticator(v *auth.Verifier) *TokenAuthenticator {
	return &TokenAuthenticator{v: v}
}

// Authenticate verifies token and returns its principal, an Identity. A
// refusal is ERROR unauthenticated.
func (a *TokenAuthenticator) Authenticate(token []byte) (Principal, error) {
	p, err := a.v.Verify(string(token))
	if err != nil {
		return nil, authError(err)
	}
	return &tokenPrincipal{p: p, credential: append([]byte(nil), token...)}, nil
}

// tokenPrincipal is a verified token: auth.Principal behind the server's
// Action and Resource. Allow allocates nothing unless it refuses.
type tokenPrincipal struct {
	p          *auth.Principal
	credential []byte
}

// Allow asks the token for the permission action needs on res. An expired
// token is unauthenticated (the connection closes); a missing permission,
// another tenant's names, or an action no permission grants is forbidden.
func (t *tokenPrincipal) Allow(action Action, res Resource) error {
	perm, ok := actionTable[action]
	if !ok {
		return &wire.Error{Code: wire.CodeForbidden, Message: "no permission grants " + string(action)}
	}
	if err := t.p.Allow(perm, res.Tenant, res.Namespace, res.Stream); err != nil {
		return authError(err)
	}
	return nil
}

func (t *tokenPrincipal) Tenant() string     { return t.p.Tenant }
func (t *tokenPrincipal) Expires() time.Time { return t.p.Expires }
func (t *tokenPrincipal) Revoked() error     { return t.p.Revoked() }
func (t *tokenPrincipal) Credential() []byte { return t.credential }

// authError gives an auth refusal its wire code: unauthenticated (no
// valid credential: a new token is needed) or forbidden (a valid one
// without the permission: never worth retrying).
func authError(err error) *wire.Error {
	code := wire.CodeForbidden
	if errors.Is(err, auth.ErrUnauthenticated) {
		code = wire.CodeUnauthenticated
	}
	return &wire.Error{Code: code, Message: err.Error()}
}

// connAuth is what a connection knows of its credential. Set at HELLO on
// the loop; expires is read by the sweep.
type connAuth struct {
	credential []byte       // the raw token, for forwarding; nil with auth off
	expires    atomic.Int64 // unix ns at which the token expires; 0: never
	release    func()       // gives the tenant's connection slot back; nil if none was taken
	// revoked, when the principal can be revoked (its key no longer
	// trusted), says whether it was; set at HELLO, before helloDone.
	revoked func() error
}

// bindPrincipal makes p the connection's principal at HELLO: it keeps the
// credential, arms the expiry, and takes a connection slot from the
// tenant's quota. Loop only.
func (c *conn) bindPrincipal(p Principal) *wire.Error {
	c.principal = p
	id, ok := p.(Identity)
	if !ok {
		return nil
	}
	if q := c.s.cfg.Quotas; q != nil && !c.relayed { // a relay's client is counted at its ingress
		release, err := q.Connect(id.Tenant())
		if err != nil {
			return c.s.quotaRefusal(err)
		}
		c.auth.release = release
	}
	c.auth.credential = id.Credential()
	if exp := id.Expires(); !exp.IsZero() {
		c.auth.expires.Store(exp.UnixNano())
	}
	if r, ok := p.(revocable); ok {
		c.auth.revoked = r.Revoked
	}
	return nil
}

// revocable is a principal whose credential can stop being trusted before
// it expires: a token whose signing key was removed from the trusted ones.
type revocable interface {
	Revoked() error
}

// releaseAuth gives back what HELLO took; at close, on the loop.
func (c *conn) releaseAuth() {
	if c.auth.release != nil {
		c.auth.release()
		c.auth.release = nil
	}
}

// credential is the raw token the connection presented (nil with auth
// off): what a broker forwarding one of this connection's requests passes
// to the owner.
func (c *conn) credential() []byte { return c.auth.credential }

// checkExpiry closes a connection whose token has expired, or whose
// signing key is no longer trusted, with ERROR unauthenticated (request id
// 0), and reports whether it did. The sweep calls it; a request in the
// meantime is refused by Allow itself.
func (c *conn) checkExpiry(now int64) bool {
	if r := c.auth.revoked; r != nil {
		if err := r(); err != nil {
			c.expire(&c.s.authn.metrics.TokensRevoked, authError(err))
			return true
		}
	}
	exp := c.auth.expires.Load()
	if exp == 0 || now < exp {
		return false
	}
	c.expire(&c.s.authn.metrics.TokensExpired, &wire.Error{Code: wire.CodeUnauthenticated,
		Message: "the token expired at " + time.Unix(0, exp).UTC().Format(time.RFC3339)})
	return true
}

// AuthorizeForwarded is the owner's check of a request another broker
// forwarded to it with the client's credential: the token is verified
// again with this server's Authenticator (signature, trusted key, expiry,
// claims), and the principal it yields must allow action on res. The
// ingress broker's verdict is never trusted, so routing does not launder a
// credential: a token tampered with on the way, signed by a key this
// broker does not trust, or expired since the client's HELLO is refused
// here. With auth off (no Authenticator) everything is allowed.
//
// It is the one-request form of what a relay connection does (relay.go):
// the relay verifies the credential once, at its HELLO, with this same
// Authenticator, and asks the principal for every request on it, so a
// FORWARD costs no signature check per request; the sweep closes the
// relay at the token's expiry or its key's removal. A refusal (a
// *wire.Error: unauthenticated or forbidden) reaches the client
// unchanged. It verifies a signature, so it costs what a HELLO does; safe
// for concurrent use.
func (s *Server) AuthorizeForwarded(credential []byte, action Action, res Resource) error {
	a := s.cfg.Authenticator
	if a == nil {
		return nil
	}
	p, err := a.Authenticate(credential)
	if err != nil {
		s.authRefused("a forwarded request's credential", "", "", err)
		return refusal(err, wire.CodeUnauthenticated)
	}
	if err := p.Allow(action, res); err != nil {
		return refusal(err, wire.CodeForbidden)
	}
	return nil
}

// authRefused counts and logs a credential that did not verify: what
// presented it (remote and client, when known) and why. The broker's
// logger throttles repeats, so a client retrying a bad token costs a line
// now and then, not one per attempt.
func (s *Server) authRefused(what, remote, client string, err error) {
	s.cfg.Metrics.AuthRefused.Add(1)
	s.cfg.Logger.Warn("authentication refused", "what", what, "remote", remote, "client", client, "err", err)
}

// AuthMetrics count what authorization and quotas did. Safe for
// concurrent use.
type AuthMetrics struct {
	// TokensExpired counts connections closed because their token
	// expired.
	TokensExpired atomic.Uint64
	// TokensRevoked counts connections closed by the sweep because the key
	// that signed their token is no longer trusted (keys reloaded).
	TokensRevoked atomic.Uint64
	// QuotaConnections, QuotaPublishRate and QuotaStoredBytes count
	// refusals by the quota that refused.
	QuotaConnections atomic.Uint64
	QuotaPublishRate atomic.Uint64
	QuotaStoredBytes atomic.Uint64
}

// authState is the server's side of authorization.
type authState struct {
	metrics AuthMetrics
}

// AuthMetrics are the server's authorization and quota counters.
func (s *Server) AuthMetrics() *AuthMetrics { return &s.authn.metrics }
