package store

import (
	"bytes"
	"fmt"
	"strings"
)

// Bounds on one transaction, checked before anything is sent. etcd's own
// defaults are 128 operations and 1.5 MiB a request; these stay inside them.
const (
	txnCmpsMax  = 128
	txnOpsMax   = 128
	txnBytesMax = 1 << 20
	keyBytesMax = 4 << 10
)

// Txn is a compare-and-swap: if every comparison holds, every operation is
// applied in one revision; otherwise nothing is.
type Txn struct {
	If   []Cmp
	Then []Op
}

// TxnResult says whether a Txn's comparisons held. Revision is the store's
// revision after it: the txn's own when it wrote, else the current one.
type TxnResult struct {
	Succeeded bool
	Revision  int64
}

type cmpTarget uint8

const (
	targetMod cmpTarget = iota + 1
	targetCreate
	targetValue
	targetPresent
)

// Cmp is one comparison of a Txn, made by the functions below.
type Cmp struct {
	key    string
	target cmpTarget
	rev    int64
	value  []byte
}

// ModRevisionIs holds when key's last put was at rev (0: key absent).
func ModRevisionIs(key string, rev int64) Cmp {
	return Cmp{key: key, target: targetMod, rev: rev}
}

// CreateRevisionIs holds when key was created at rev (0: key absent). A
// key deleted and put again has a new create revision, so this compares
// one incarnation of a key, as an election's guard needs.
func CreateRevisionIs(key string, rev int64) Cmp {
	return Cmp{key: key, target: targetCreate, rev: rev}
}

// ValueIs holds when key is present and holds value.
func ValueIs(key string, value []byte) Cmp {
	return Cmp{key: key, target: targetValue, value: value}
}

// Absent holds when key is not present.
func Absent(key string) Cmp { return CreateRevisionIs(key, 0) }

// Present holds when key is present.
func Present(key string) Cmp { return Cmp{key: key, target: targetPresent} }

// Key is the key the comparison reads.
func (c Cmp) Key() string { return c.key }

func (c Cmp) String() string {
	switch c.target {
	case targetMod:
		return fmt.Sprintf("mod_revision(%q) == %d", c.key, c.rev)
	case targetCreate:
		return fmt.Sprintf("create_revision(%q) == %d", c.key, c.rev)
	case targetValue:
		return fmt.Sprintf("value(%q) == %q", c.key, c.value)
	case targetPresent:
		return fmt.Sprintf("present(%q)", c.key)
	}
	return "invalid comparison"
}

type opKind uint8

const (
	opPut opKind = iota + 1
	opDelete
	opDeletePrefix
)

// Op is one write of a Txn, made by the functions below.
type Op struct {
	kind  opKind
	key   string
	value []byte
	lease LeaseID
}

// Put writes value at key, attached to no lease.
func Put(key string, value []byte) Op { return Op{kind: opPut, key: key, value: value} }

// PutWithLease writes value at key, attached to lease: the key is deleted
// when the lease ends.
func PutWithLease(key string, value []byte, lease LeaseID) Op {
	return Op{kind: opPut, key: key, value: value, lease: lease}
}

// Delete deletes key (nothing, if it is absent).
func Delete(key string) Op { return Op{kind: opDelete, key: key} }

// DeletePrefix deletes every key under prefix (which must not be empty).
func DeletePrefix(prefix string) Op { return Op{kind: opDeletePrefix, key: prefix} }

// covers reports whether the op deletes key.
func (o Op) covers(key string) bool {
	switch o.kind {
	case opDelete:
		return o.key == key
	case opDeletePrefix:
		return strings.HasPrefix(key, o.key)
	}
	return false
}

// validate refuses a Txn either implementation would refuse, so both
// refuse it the same way, before anything is sent.
func (t Txn) validate() error {
	if len(t.If) > txnCmpsMax || len(t.Then) > txnOpsMax {
		return fmt.Errorf("%w: %d comparisons and %d operations (at most %d and %d)",
			ErrInvalid, len(t.If), len(t.Then), txnCmpsMax, txnOpsMax)
	}
	size := 0
	for _, c := range t.If {
		if err := validKey(c.key); err != nil {
			return err
		}
		size += len(c.key) + len(c.value)
	}
	for i, o := range t.Then {
		if err := validKey(o.key); err != nil {
			return err
		}
		if err := t.validPut(i); err != nil {
			return err
		}
		size += len(o.key) + len(o.value)
	}
	if size > txnBytesMax {
		return fmt.Errorf("%w: a txn of %d bytes (at most %d)", ErrInvalid, size, txnBytesMax)
	}
	return nil
}

// validPut refuses a put whose key another op of the txn also writes
// (etcd's rule: deletes may overlap deletes, nothing may overlap a put).
func (t Txn) validPut(i int) error {
	put := t.Then[i]
	if put.kind != opPut {
		return nil
	}
	for j, o := range t.Then {
		if j != i && (o.covers(put.key) || (o.kind == opPut && o.key == put.key)) {
			return fmt.Errorf("%w: key %q written twice in one txn", ErrInvalid, put.key)
		}
	}
	return nil
}

func validKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: an empty key", ErrInvalid)
	}
	if len(key) > keyBytesMax {
		return fmt.Errorf("%w: a key of %d bytes (at most %d)", ErrInvalid, len(key), keyBytesMax)
	}
	return nil
}

// holds evaluates the comparison against kv, the key's current state (the
// zero KV when absent), with etcd's rule that a value never equals an
// absent key's.
func (c Cmp) holds(kv KV) bool {
	switch c.target {
	case targetMod:
		return kv.ModRevision == c.rev
	case targetCreate:
		return kv.CreateRevision == c.rev
	case targetValue:
		return kv.Exists() && bytes.Equal(kv.Value, c.value)
	case targetPresent:
		return kv.Exists()
	}
	panic("felix/cluster/store: a Cmp not made by this package's constructors")
}
