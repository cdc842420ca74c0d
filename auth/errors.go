package auth

import (
	"errors"
	"fmt"
	"time"
)

// Errors a caller can test with errors.Is. Unauthenticated (no valid
// credential) and forbidden (a valid credential without the permission) are
// distinct, and map to distinct wire codes.
var (
	ErrUnauthenticated = errors.New("felix/auth: unauthenticated")
	ErrForbidden       = errors.New("felix/auth: forbidden")
	ErrQuotaExceeded   = errors.New("felix/auth: quota exceeded")
	ErrBadPermission   = errors.New("felix/auth: bad permission")
)

// QuotaError names the limit a tenant reached.
type QuotaError struct {
	Tenant string
	Limit  string // "publish_bytes_per_second", "connections", "stored_bytes"
	Max    int64
	// RetryAfter is when the refused request would fit, for the rate
	// limit; zero for the others (they wait on someone else: a connection
	// closing, retention removing data).
	RetryAfter time.Duration
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("felix/auth: tenant %q is over its %s quota (%d)", e.Tenant, e.Limit, e.Max)
}

// Unwrap makes errors.Is(err, ErrQuotaExceeded) true.
func (e *QuotaError) Unwrap() error { return ErrQuotaExceeded }

// unauthenticated wraps a reason; the reason is for logs, the code for clients.
func unauthenticated(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrUnauthenticated}, args...)...)
}
