package auth

import (
	"fmt"
	"time"
)

// Principal is who a verified token speaks for.
type Principal struct {
	Tenant  string
	Subject string
	Perms   []Permission
	Expires time.Time // zero: never (only the principal of a broker with auth off)
	now     func() time.Time
	// keyID names the key that signed the token, and verifier the
	// Verifier that checked it: Allow refuses once it trusts that key no
	// more. verifier is nil for a principal made by hand.
	keyID    string
	verifier *Verifier
}

// Anonymous is the principal of every connection when auth is off: it may
// do anything in any tenant.
func Anonymous() *Principal { return nil }

// Allow checks that the principal may perform action on (tenant,
// namespace, name). A nil principal (auth off) allows everything. The
// refusal says nothing of whether the resource exists.
func (p *Principal) Allow(action Action, tenant, namespace, name string) error {
	if p == nil {
		return nil
	}
	if !p.Expires.IsZero() && !p.now().Before(p.Expires) {
		return unauthenticated("token of %q expired at %s", p.Subject, p.Expires.UTC().Format(time.RFC3339))
	}
	if err := p.Revoked(); err != nil {
		return err
	}
	if tenant != p.Tenant {
		return fmt.Errorf("%w: %s on tenant %q: the token is for tenant %q", ErrForbidden, action, tenant, p.Tenant)
	}
	for _, perm := range p.Perms {
		if perm.grantsPath(action, namespace, name) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s on %s/%s/%s is not granted to %q", ErrForbidden, action, tenant, namespace, name, p.Subject)
}

// Revoked is an ErrUnauthenticated once the Verifier that checked the
// token no longer trusts the key that signed it (Verifier.SetKeys), and nil
// before that, or for a principal no Verifier made.
func (p *Principal) Revoked() error {
	if p == nil || p.verifier == nil || p.verifier.trusts(p.keyID) {
		return nil
	}
	return unauthenticated("token of %q was signed by key %s, which is no longer trusted", p.Subject, p.keyID)
}

// Expired reports whether the token has expired.
func (p *Principal) Expired() bool {
	return p != nil && !p.Expires.IsZero() && !p.now().Before(p.Expires)
}
