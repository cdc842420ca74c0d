package netio

import (
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// streamCacheMax bounds the stream names one connection remembers; past it
// the cache starts over.
const streamCacheMax = 256

// streamCache turns the stream names of a frame into an engine.StreamID
// without allocating: each connection remembers the ids it has seen, keyed
// by the names' bytes. It remembers only valid names, and only the names:
// the stream itself is looked up in the engine every time, so a deleted or
// re-created stream is never served stale. Loop only.
type streamCache struct {
	ids map[string]engine.StreamID
	key []byte
}

// id returns the StreamID a ref names, or invalid_argument for a name the
// engine refuses.
func (sc *streamCache) id(ref wire.StreamRef) (engine.StreamID, error) {
	key := sc.key[:0]
	for _, name := range [...][]byte{ref.Tenant, ref.Namespace, ref.Stream} {
		key = append(key, byte(len(name)))
		key = append(key, name...)
	}
	sc.key = key
	if id, ok := sc.ids[string(key)]; ok {
		return id, nil
	}
	id := engine.StreamID{Tenant: string(ref.Tenant), Namespace: string(ref.Namespace), Name: string(ref.Stream)}
	if err := id.Check(); err != nil {
		return engine.StreamID{}, err
	}
	if sc.ids == nil || len(sc.ids) >= streamCacheMax {
		sc.ids = make(map[string]engine.StreamID, 8)
	}
	sc.ids[string(key)] = id
	return id, nil
}

// stream resolves a ref to an open stream the principal may act on.
func (c *conn) stream(ref wire.StreamRef, action Action) (*engine.Stream, engine.StreamID, error) {
	id, err := c.streams.id(ref)
	if err != nil {
		return nil, id, err
	}
	if err := c.principal.Allow(action, resourceOf(id)); err != nil {
		return nil, id, refusal(err, wire.CodeForbidden)
	}
	st, err := c.s.cfg.Engine.Stream(id)
	return st, id, err
}

func resourceOf(id engine.StreamID) Resource {
	return Resource{Tenant: id.Tenant, Namespace: id.Namespace, Stream: id.Name}
}
