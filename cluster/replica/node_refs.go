package replica

import (
	"encoding/binary"

	"github.com/felixbroker/felix/netio/wire"
)

// refIndex finds a held log by the LogRef a peer's frame names, without
// turning the ref's names into strings. Looking it up by logKey would
// convert three or four []byte names per frame, and Go converts one longer
// than 32 bytes on the heap: every REPLICATE of a log with a long tenant,
// namespace or name would allocate on the follower. The index is keyed by
// appendRefKey's encoding of the ref instead, built in a reused scratch
// buffer, and a map indexed by string(bytes) converts nothing. Guarded by
// Node.mu, which also guards the logs map it mirrors.
type refIndex struct {
	m       map[string]*held
	scratch []byte
}

func newRefIndex() refIndex { return refIndex{m: map[string]*held{}} }

// get is the log ref names, nil when none is held.
func (x *refIndex) get(ref wire.LogRef) *held {
	x.scratch = appendRefKey(x.scratch[:0], ref)
	return x.m[string(x.scratch)]
}

func (x *refIndex) put(ref wire.LogRef, h *held) { x.m[string(appendRefKey(nil, ref))] = h }

func (x *refIndex) remove(ref wire.LogRef) {
	x.scratch = appendRefKey(x.scratch[:0], ref)
	delete(x.m, string(x.scratch))
}

// appendRefKey appends ref's key: kind, each name behind its uvarint
// length, shard. Two refs have the same key exactly when they name the
// same log (an empty part and none are the same: the primary).
func appendRefKey(dst []byte, ref wire.LogRef) []byte {
	dst = append(dst, ref.Kind)
	for _, name := range [...][]byte{ref.Tenant, ref.Namespace, ref.Name, ref.Part} {
		dst = binary.AppendUvarint(dst, uint64(len(name)))
		dst = append(dst, name...)
	}
	return binary.LittleEndian.AppendUint32(dst, ref.Shard)
}
