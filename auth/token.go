package auth

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Claims are a token's claims.
type Claims struct {
	Tenant string   `json:"tenant"`
	Perms  []string `json:"perms"`
	jwt.RegisteredClaims
}

// Issue signs a token for tenant and subject with the given permissions,
// valid for ttl from now.
func Issue(priv ed25519.PrivateKey, tenant, subject string, perms []string, ttl time.Duration, now time.Time) (string, error) {
	if tenant == "" {
		return "", errors.New("felix/auth: a token needs a tenant")
	}
	if ttl <= 0 {
		return "", errors.New("felix/auth: a token needs a positive lifetime")
	}
	if _, err := ParsePermissions(perms); err != nil {
		return "", err
	}
	claims := Claims{Tenant: tenant, Perms: perms, RegisteredClaims: jwt.RegisteredClaims{
		Subject:   subject,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
	}}
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tok.Header["kid"] = KeyID(priv.Public().(ed25519.PublicKey))
	return tok.SignedString(priv)
}

// Verifier checks tokens against trusted public keys, which SetKeys may
// replace while it serves. Safe for concurrent use.
type Verifier struct {
	keys atomic.Pointer[map[string]ed25519.PublicKey] // key id -> key
	now  func() time.Time
}

// NewVerifier trusts keys; now is the clock (nil: time.Now).
func NewVerifier(keys []ed25519.PublicKey, now func() time.Time) (*Verifier, error) {
	if now == nil {
		now = time.Now
	}
	v := &Verifier{now: now}
	if err := v.SetKeys(keys); err != nil {
		return nil, err
	}
	return v, nil
}

// SetKeys makes keys the trusted ones, in place of the earlier set. A
// token is verified against the keys trusted when it is presented; a
// principal whose token a key no longer trusted signed is refused, as
// unauthenticated, at its next Allow. An empty set is refused and changes
// nothing.
func (v *Verifier) SetKeys(keys []ed25519.PublicKey) error {
	if len(keys) == 0 {
		return errors.New("felix/auth: a verifier needs at least one trusted key")
	}
	set := make(map[string]ed25519.PublicKey, len(keys))
	for _, k := range keys {
		set[KeyID(k)] = k
	}
	v.keys.Store(&set)
	return nil
}

// trusts reports whether the key named id is trusted now.
func (v *Verifier) trusts(id string) bool {
	_, ok := (*v.keys.Load())[id]
	return ok
}

// Verify checks a token's signature, key, expiry and claims and returns its
// principal. Every failure matches ErrUnauthenticated.
func (v *Verifier) Verify(token string) (*Principal, error) {
	if token == "" {
		return nil, unauthenticated("no token")
	}
	var claims Claims
	tok, err := jwt.ParseWithClaims(token, &claims, v.key,
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithExpirationRequired(), jwt.WithTimeFunc(v.now), jwt.WithStrictDecoding())
	if err != nil {
		return nil, unauthenticated("%v", err)
	}
	if claims.Tenant == "" {
		return nil, unauthenticated("token has no tenant")
	}
	perms, err := ParsePermissions(claims.Perms)
	if err != nil {
		return nil, unauthenticated("%v", err)
	}
	kid, _ := tok.Header["kid"].(string)
	return &Principal{Tenant: claims.Tenant, Subject: claims.Subject, Perms: perms,
		Expires: claims.ExpiresAt.Time, now: v.now, keyID: kid, verifier: v}, nil
}

func (v *Verifier) key(t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	k, ok := (*v.keys.Load())[kid]
	if !ok {
		return nil, fmt.Errorf("unknown key %q", kid)
	}
	return k, nil
}

// UnverifiedClaims are the claims token carries, read without checking its
// signature or expiry: for a client to learn what its own token says (its
// tenant, when it expires), never for a broker to trust.
func UnverifiedClaims(token string) (Claims, error) {
	var claims Claims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &claims); err != nil {
		return Claims{}, fmt.Errorf("felix/auth: reading the token: %w", err)
	}
	return claims, nil
}
