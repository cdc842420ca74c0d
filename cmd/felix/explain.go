package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"syscall"

	"github.com/felixbroker/felix/client"
)

// What felix prints when a command fails: one line, the cause once. The
// packages' own prefixes ("felix/client: broker refused: not_found:
// felix/engine: ...") say where an error was made, which a programmer
// reading a wrapped error wants and a user at a prompt does not; the
// refusal's code stays, at the end, for scripts and searches.

// packagePrefix is an error prefix of one of felix's packages.
var packagePrefix = regexp.MustCompile(`felix/[a-z/]+: `)

// explain is the line felix prints for err.
func explain(err error) string {
	var se *client.ServerError
	msg := err.Error()
	if errors.As(err, &se) {
		cause := packagePrefix.ReplaceAllString(se.Message, "")
		if cause == "" {
			cause = "refused"
		}
		msg = strings.Replace(msg, se.Error(), fmt.Sprintf("%s (%s)", cause, se.Name), 1)
	}
	msg = packagePrefix.ReplaceAllString(msg, "")
	if errors.Is(err, client.ErrUnauthenticated) && strings.Contains(msg, "expired") {
		msg += "; get a new token with felix token issue (--ttl sets how long it lives)"
	}
	return msg
}

// missingError is a command's object that does not exist, with the command
// that lists what does.
type missingError struct {
	kind, name, list string
	err              error
}

func (e *missingError) Error() string {
	return fmt.Sprintf("%s %s does not exist (%s)", e.kind, e.name, e.list)
}

func (e *missingError) Unwrap() error { return e.err }

// missingStream names the stream a not_found is about.
func missingStream(err error, s client.Stream) error {
	if errors.Is(err, client.ErrNotFound) {
		return &missingError{kind: "stream", name: s.String(), list: "felix stream list --namespace " + s.Namespace, err: err}
	}
	return err
}

// missingCache names the cache a not_found is about.
func missingCache(err error, c client.CacheName) error {
	if errors.Is(err, client.ErrNotFound) {
		return &missingError{kind: "cache", name: c.String(), list: "felix cache create " + c.String() + " makes it", err: err}
	}
	return err
}

// dialHint is what to try when no broker could be reached: only a refused
// connection means nothing listens there; a TLS mismatch says which way.
func dialHint(err error) string {
	causes := []error{err}
	var ue *client.UnreachableError
	if errors.As(err, &ue) {
		causes = causes[:0]
		for _, f := range ue.Tried {
			causes = append(causes, f.Err)
		}
	}
	refused := len(causes) > 0
	for _, c := range causes {
		var rh tls.RecordHeaderError
		if errors.As(c, &rh) {
			return " (this address does not speak TLS: drop --tls, or use the broker's --tls-addr)"
		}
		if errors.Is(c, context.DeadlineExceeded) && strings.Contains(c.Error(), "handshake") {
			return " (it took the connection but never answered the handshake: is it a broker's client address, --addr " +
				"(7117 by default), rather than its admin (7118) or peer (7119) address, or a TLS listener without --tls?)"
		}
		refused = refused && errors.Is(c, syscall.ECONNREFUSED)
	}
	if refused {
		return " (is a broker running? `felix serve` or `make run`)"
	}
	return ""
}
