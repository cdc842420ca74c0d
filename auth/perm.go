package auth

import (
	"fmt"
	"strings"
)

// Action is what an operation does.
type Action string

// The actions a permission can grant.
const (
	ActionPublish    Action = "publish"
	ActionSubscribe  Action = "subscribe"
	ActionCacheRead  Action = "cache.read"
	ActionCacheWrite Action = "cache.write"
	ActionCounter    Action = "counter"
	ActionGroup      Action = "group"
	ActionAdmin      Action = "admin"
	actionAny        Action = "*"
)

var actions = map[Action]bool{ActionPublish: true, ActionSubscribe: true, ActionCacheRead: true,
	ActionCacheWrite: true, ActionCounter: true, ActionGroup: true, ActionAdmin: true, actionAny: true}

// Permission is one parsed "action:resource".
type Permission struct {
	Action   Action
	Resource string // a pattern over "namespace/name"; "*" matches any run
}

func (p Permission) String() string { return string(p.Action) + ":" + p.Resource }

// ParsePermission reads "action:resource".
func ParsePermission(s string) (Permission, error) {
	a, r, ok := strings.Cut(s, ":")
	if !ok || r == "" {
		return Permission{}, fmt.Errorf("%w %q: want action:resource, e.g. publish:orders/*", ErrBadPermission, s)
	}
	if !actions[Action(a)] {
		return Permission{}, fmt.Errorf("%w %q: unknown action %q", ErrBadPermission, s, a)
	}
	return Permission{Action: Action(a), Resource: r}, nil
}

// ParsePermissions reads a list.
func ParsePermissions(list []string) ([]Permission, error) {
	out := make([]Permission, 0, len(list))
	for _, s := range list {
		p, err := ParsePermission(s)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Grants reports whether p allows action on resource ("namespace/name").
func (p Permission) Grants(action Action, resource string) bool {
	return (p.Action == actionAny || p.Action == action) && match(p.Resource, resource)
}

// match is glob matching where '*' matches any run of characters,
// including none and including '/'.
func match(pattern, s string) bool { return glob(pattern, text(s)) }

// grantsPath is Grants on "namespace/name" without building the string:
// Allow runs for every publish and must not allocate.
func (p Permission) grantsPath(action Action, namespace, name string) bool {
	return (p.Action == actionAny || p.Action == action) && glob(p.Resource, resourcePath{namespace, name})
}

// subject is what glob matches a pattern against, one byte at a time.
type subject interface {
	size() int
	at(i int) byte
}

// text is a subject held in one string.
type text string

func (t text) size() int     { return len(t) }
func (t text) at(i int) byte { return t[i] }

// resourcePath is the subject "namespace/name".
type resourcePath struct{ namespace, name string }

func (r resourcePath) size() int { return len(r.namespace) + 1 + len(r.name) }

func (r resourcePath) at(i int) byte {
	switch n := len(r.namespace); {
	case i < n:
		return r.namespace[i]
	case i == n:
		return '/'
	default:
		return r.name[i-n-1]
	}
}

// glob matches with backtracking to the last star only, so it is linear
// in practice and never recursive.
func glob[S subject](pattern string, s S) bool {
	star, back := -1, 0
	i, j, n := 0, 0, s.size()
	for j < n {
		switch {
		case i < len(pattern) && pattern[i] == '*':
			star, back = i, j
			i++
		case i < len(pattern) && pattern[i] == s.at(j):
			i++
			j++
		case star >= 0:
			back++
			i, j = star+1, back
		default:
			return false
		}
	}
	for i < len(pattern) && pattern[i] == '*' {
		i++
	}
	return i == len(pattern)
}
