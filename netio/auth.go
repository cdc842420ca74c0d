package netio

// Authenticator checks the token a client presents in HELLO. It is the seam
// the authorization work plugs into: a nil Authenticator turns auth off and
// every request is allowed.
//
// Authenticate runs on an event loop, once per connection: it must not
// block (verify a signature, do not call out). token aliases the frame and
// is valid only during the call. An error refuses the connection with
// ERROR unauthenticated (or the wire code the error carries) and closes it.
type Authenticator interface {
	Authenticate(token []byte) (Principal, error)
}

// Principal is who a connection speaks for. The server asks it before
// every operation; an error refuses that request with ERROR forbidden (or
// the wire code the error carries) and the connection goes on.
//
// Allow runs on an event loop for every publish: it must not block and
// should not allocate.
type Principal interface {
	Allow(action Action, resource Resource) error
}

// Action is an operation a principal may be allowed.
type Action string

// The actions the server checks.
const (
	ActionPublish        Action = "publish"
	ActionSubscribe      Action = "subscribe"
	ActionStreamCreate   Action = "stream.create"
	ActionStreamDelete   Action = "stream.delete"
	ActionStreamDescribe Action = "stream.describe"
	ActionStreamList     Action = "stream.list"
)

// Resource is what an action touches. Stream is empty for a namespace-wide
// action (stream.list).
type Resource struct {
	Tenant    string
	Namespace string
	Stream    string
}

// AllowAll is the principal of every connection when auth is off.
type AllowAll struct{}

// Allow allows everything.
func (AllowAll) Allow(Action, Resource) error { return nil }
