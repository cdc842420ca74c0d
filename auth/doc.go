// Package auth is Felix's authorization: Ed25519-signed, tenant-scoped
// tokens (JWTs), the permission grammar, and per-tenant quotas.
//
// It must never accept a token it cannot verify against a trusted key,
// never let a permission reach across tenants whatever a resource name says,
// and never say in a refusal whether the resource exists.
//
// # Tokens
//
// A token is a JWT signed with EdDSA (Ed25519). Its header names the key
// ("kid": the first 16 hex digits of the SHA-256 of the public key), so a
// broker can trust several keys at once and operators can rotate: add the
// new public key, issue with the new private key, remove the old key once
// its tokens have expired. Claims:
//
//	{"tenant": "acme", "sub": "billing-svc", "perms": ["publish:orders/*", "subscribe:*"],
//	 "exp": 1767225600, "iat": 1767222000}
//
// A broker verifies the token once per connection and checks its expiry
// again on every operation, so a token that expires mid-connection stops
// working at its expiry.
//
// # Permissions
//
//	permission = action ":" resource
//	action     = "publish" | "subscribe" | "cache.read" | "cache.write" |
//	             "counter" | "group" | "admin" | "*"
//	resource   = namespace "/" name, where "*" matches any run of characters
//
// The tenant is never part of a resource: every permission is scoped to the
// token's tenant, and an operation on another tenant's names is refused.
// "admin" covers creating and deleting streams and caches.
//
// # Quotas
//
// Per tenant, beyond the contract: publish bytes per second (a token
// bucket), open connections, and stored bytes. A refusal is a *QuotaError
// naming the limit (and, for the rate, when the request would fit); other
// tenants are unaffected.
//
// Principal.Allow and Quotas.AdmitPublish run before every publish on a
// broker's event loop: neither allocates unless it refuses.
//
// # Forwarding
//
// A broker that forwards a request to a shard's owner passes the original
// token along (Credential), and the owner verifies it again: routing never
// launders a credential.
package auth
