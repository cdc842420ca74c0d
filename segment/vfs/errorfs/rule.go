package errorfs

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
)

// OpKind names the calls a Rule matches.
type OpKind uint8

// The kinds of call. The zero OpKind matches nothing and Inject refuses it.
const (
	Write       OpKind = iota + 1 // File.WriteAt
	WriteSync                     // File.WriteAtSync
	Sync                          // File.Sync
	Create                        // FS.Create
	Remove                        // FS.Remove
	Rename                        // FS.Rename (either name matches PathContains)
	SyncDir                       // FS.SyncDir
	Truncate                      // File.Truncate
	Preallocate                   // File.Preallocate
	Read                          // File.ReadAt
	Open                          // FS.Open and FS.OpenReadWrite
	MkdirAll                      // FS.MkdirAll
	List                          // FS.List
	Stat                          // FS.Stat and File.Size
	Any                           // every call above; never Close or Name
)

var opNames = [...]string{
	Write: "write", WriteSync: "write-sync", Sync: "sync", Create: "create",
	Remove: "remove", Rename: "rename", SyncDir: "sync-dir", Truncate: "truncate",
	Preallocate: "preallocate", Read: "read", Open: "open", MkdirAll: "mkdir-all",
	List: "list", Stat: "stat", Any: "any",
}

func (k OpKind) String() string {
	if k > 0 && int(k) < len(opNames) {
		return opNames[k]
	}
	return fmt.Sprintf("opkind(%d)", uint8(k))
}

// Rule says which calls fail and how.
type Rule struct {
	// Op is the kind of call the rule matches.
	Op OpKind
	// PathContains, when set, restricts the rule to calls on a name that
	// contains it (for a File, the name it was opened with).
	PathContains string
	// Nth fails only the Nth matching call counted from Inject, 1-based,
	// after which the rule is spent; 0 fails every matching call.
	Nth int
	// Err is the error the call returns, wrapped. When nil: io.ErrShortWrite
	// for a rule with ShortBy, syscall.EIO otherwise.
	Err error
	// ShortBy, for Write and WriteSync calls, first writes all but the
	// last ShortBy bytes (without syncing), then returns that count and
	// Err. Without it a failed write writes nothing.
	ShortBy int
}

// ErrInjected matches, with errors.Is, every error this package injects;
// the injected Err matches too.
var ErrInjected = errors.New("felix/vfs/errorfs: injected error")

// InjectedError is what a call failed by a Rule returns.
type InjectedError struct {
	Op   OpKind
	Path string
	Err  error // the Rule's Err, defaulted
}

func (e *InjectedError) Error() string {
	return fmt.Sprintf("felix/vfs/errorfs: injected %s %s: %v", e.Op, e.Path, e.Err)
}

// Unwrap lets errors.Is find both ErrInjected and the injected Err.
func (e *InjectedError) Unwrap() []error { return []error{ErrInjected, e.Err} }

// rule is a Rule with its count of matching calls.
type rule struct {
	Rule
	seen int
}

// validate panics on a Rule that could never mean anything: a bug in the
// test that wrote it.
func (r Rule) validate() {
	if r.Op == 0 || r.Op > Any {
		panic(fmt.Sprintf("felix/vfs/errorfs: rule with invalid Op %v", r.Op))
	}
	if r.Nth < 0 || r.ShortBy < 0 {
		panic(fmt.Sprintf("felix/vfs/errorfs: rule with negative Nth (%d) or ShortBy (%d)", r.Nth, r.ShortBy))
	}
}

func (r Rule) err() error {
	switch {
	case r.Err != nil:
		return r.Err
	case r.ShortBy > 0:
		return io.ErrShortWrite
	}
	return syscall.EIO
}

// matches reports whether a call of kind op on names is one r counts.
func (r *rule) matches(op OpKind, names [2]string) bool {
	if r.Op != Any && r.Op != op {
		return false
	}
	if r.PathContains == "" {
		return true
	}
	return strings.Contains(names[0], r.PathContains) ||
		(names[1] != "" && strings.Contains(names[1], r.PathContains))
}

// count counts one matching call and reports whether it fails.
func (r *rule) count() bool {
	if r.Nth == 0 {
		return true
	}
	r.seen++
	return r.seen == r.Nth
}
