package errorfs

import (
	"sync"

	"github.com/felixbroker/felix/segment/vfs"
)

// FS wraps a vfs.FS and fails the calls its Rules match. It is safe for
// concurrent use.
type FS struct {
	inner vfs.FS

	mu       sync.Mutex
	rules    []*rule
	injected int
}

var _ vfs.FS = (*FS)(nil)

// Wrap returns fs with no rules: every call passes through.
func Wrap(fs vfs.FS) *FS { return &FS{inner: fs} }

// Inject adds a rule. Each rule counts its matching calls on its own; when
// several fail the same call, the one injected first gives the error. It
// panics on a Rule with an invalid Op or a negative Nth or ShortBy.
func (f *FS) Inject(r Rule) {
	r.validate()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &rule{Rule: r})
}

// Clear removes every rule.
func (f *FS) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

// Injected returns how many calls have failed by a rule so far.
func (f *FS) Injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// check counts a call of kind op on name (and other, for a rename) against
// every rule, and returns the rule that fails it, or nil.
func (f *FS) check(op OpKind, name, other string) *Rule {
	f.mu.Lock()
	defer f.mu.Unlock()
	var failing *Rule
	for _, r := range f.rules {
		if r.matches(op, [2]string{name, other}) && r.count() && failing == nil {
			failing = &r.Rule
		}
	}
	if failing != nil {
		f.injected++
	}
	return failing
}

// fail returns the error a call of kind op on name, failed by r, returns.
func fail(r *Rule, op OpKind, name string) error {
	return &InjectedError{Op: op, Path: name, Err: r.err()}
}

func (f *FS) Create(name string) (vfs.File, error) {
	if r := f.check(Create, name, ""); r != nil {
		return nil, fail(r, Create, name)
	}
	return f.wrapFile(f.inner.Create(name))
}

func (f *FS) OpenReadWrite(name string) (vfs.File, error) {
	if r := f.check(Open, name, ""); r != nil {
		return nil, fail(r, Open, name)
	}
	return f.wrapFile(f.inner.OpenReadWrite(name))
}

func (f *FS) Open(name string) (vfs.File, error) {
	if r := f.check(Open, name, ""); r != nil {
		return nil, fail(r, Open, name)
	}
	return f.wrapFile(f.inner.Open(name))
}

func (f *FS) wrapFile(inner vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &file{fs: f, inner: inner}, nil
}

// RemoveDir fails as a Remove rule says (a directory is removed like a file).
func (f *FS) RemoveDir(name string) error {
	if r := f.check(Remove, name, ""); r != nil {
		return fail(r, Remove, name)
	}
	return f.inner.RemoveDir(name)
}

func (f *FS) Remove(name string) error {
	if r := f.check(Remove, name, ""); r != nil {
		return fail(r, Remove, name)
	}
	return f.inner.Remove(name)
}

func (f *FS) Rename(oldname, newname string) error {
	if r := f.check(Rename, oldname, newname); r != nil {
		return fail(r, Rename, oldname)
	}
	return f.inner.Rename(oldname, newname)
}

func (f *FS) MkdirAll(dir string) error {
	if r := f.check(MkdirAll, dir, ""); r != nil {
		return fail(r, MkdirAll, dir)
	}
	return f.inner.MkdirAll(dir)
}

func (f *FS) List(dir string) ([]string, error) {
	if r := f.check(List, dir, ""); r != nil {
		return nil, fail(r, List, dir)
	}
	return f.inner.List(dir)
}

func (f *FS) SyncDir(dir string) error {
	if r := f.check(SyncDir, dir, ""); r != nil {
		return fail(r, SyncDir, dir)
	}
	return f.inner.SyncDir(dir)
}

func (f *FS) Stat(name string) (int64, error) {
	if r := f.check(Stat, name, ""); r != nil {
		return 0, fail(r, Stat, name)
	}
	return f.inner.Stat(name)
}
