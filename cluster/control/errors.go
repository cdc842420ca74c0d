package control

import "errors"

// Errors a caller can test with errors.Is.
var (
	// ErrExists: a create found the name taken. A stream's also matches
	// engine.ErrStreamExists, a cache's cache.ErrCacheExists.
	ErrExists = errors.New("felix/cluster/control: already exists")
	// ErrNotFound: a delete found nothing under the name. A stream's also
	// matches engine.ErrStreamNotFound, a cache's cache.ErrCacheNotFound.
	ErrNotFound = errors.New("felix/cluster/control: not found")
	// ErrNotPlaced: an object was created but the control plane neither
	// placed it nor said why within the wait (is one running?). It stays
	// created, and is placed when a control plane gets to it.
	ErrNotPlaced = errors.New("felix/cluster/control: not placed within the wait")
	// ErrCreatedNotPlaced: a StreamCatalog's or CacheCatalog's create
	// wrote the entry, but it was not placed (or this broker's view did not
	// see it placed) within the wait; the error also matches why
	// (cluster.ErrTooFewBrokers, ErrNotPlaced). The create is not undone:
	// the entry stays in the catalog and the control plane places it once
	// it can (enough brokers joined, a control plane running).
	ErrCreatedNotPlaced = errors.New("felix/cluster/control: created, but not placed yet (the entry stays, and is placed once the cluster can)")
	// ErrConflict: Migrate found the name taken in the store by an entry of
	// another config (or one it cannot read); it never overwrites it.
	ErrConflict = errors.New("felix/cluster/control: the store's catalog holds another entry under the name")
	// ErrMalformed: a key or value under Root that this format cannot read.
	ErrMalformed = errors.New("felix/cluster/control: malformed key or value")
	// ErrInvalid: a request refused before anything was written.
	ErrInvalid = errors.New("felix/cluster/control: invalid request")
	// ErrNotRegistered: a broker the view has no registration of (or none
	// with what was asked for).
	ErrNotRegistered = errors.New("felix/cluster/control: broker not registered")
	// ErrClosed: the component was closed.
	ErrClosed = errors.New("felix/cluster/control: closed")
)
