package wire

import "encoding/json"

// StreamRef names a stream: (tenant, namespace, stream). On the wire each
// name is a u8 length and that many bytes (UTF-8), at most
// Limits.NameBytesMax:
//
//	u8 len | tenant | u8 len | namespace | u8 len | stream
//
// Decoded refs alias the frame. In JSON bodies it is
// {"tenant": "...", "namespace": "...", "stream": "..."}.
type StreamRef struct {
	Tenant    []byte
	Namespace []byte
	Stream    []byte
}

// CacheRef names a cache: (tenant, namespace, cache), laid out as StreamRef.
// A cache key or a counter is a CacheRef plus a key.
type CacheRef struct {
	Tenant    []byte
	Namespace []byte
	Cache     []byte
}

// String is "tenant/namespace/stream", for logs.
func (r StreamRef) String() string {
	return string(r.Tenant) + "/" + string(r.Namespace) + "/" + string(r.Stream)
}

// String is "tenant/namespace/cache", for logs.
func (r CacheRef) String() string {
	return string(r.Tenant) + "/" + string(r.Namespace) + "/" + string(r.Cache)
}

func appendStreamRef(b []byte, r StreamRef) []byte {
	return appendName(appendName(appendName(b, r.Tenant), r.Namespace), r.Stream)
}

func appendCacheRef(b []byte, r CacheRef) []byte {
	return appendName(appendName(appendName(b, r.Tenant), r.Namespace), r.Cache)
}

func (c *cursor) streamRef(maxBytes int) StreamRef {
	return StreamRef{Tenant: c.name(maxBytes), Namespace: c.name(maxBytes), Stream: c.name(maxBytes)}
}

func (c *cursor) cacheRef(maxBytes int) CacheRef {
	return CacheRef{Tenant: c.name(maxBytes), Namespace: c.name(maxBytes), Cache: c.name(maxBytes)}
}

type streamRefJSON struct {
	Tenant    string `json:"tenant"`
	Namespace string `json:"namespace"`
	Stream    string `json:"stream"`
}

type cacheRefJSON struct {
	Tenant    string `json:"tenant"`
	Namespace string `json:"namespace"`
	Cache     string `json:"cache"`
}

// MarshalJSON writes the names as strings.
func (r StreamRef) MarshalJSON() ([]byte, error) {
	return json.Marshal(streamRefJSON{string(r.Tenant), string(r.Namespace), string(r.Stream)})
}

// UnmarshalJSON reads the names as strings, into fresh byte slices.
func (r *StreamRef) UnmarshalJSON(b []byte) error {
	var j streamRefJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = StreamRef{Tenant: ownBytes(j.Tenant), Namespace: ownBytes(j.Namespace), Stream: ownBytes(j.Stream)}
	return nil
}

// MarshalJSON writes the names as strings.
func (r CacheRef) MarshalJSON() ([]byte, error) {
	return json.Marshal(cacheRefJSON{string(r.Tenant), string(r.Namespace), string(r.Cache)})
}

// UnmarshalJSON reads the names as strings, into fresh byte slices.
func (r *CacheRef) UnmarshalJSON(b []byte) error {
	var j cacheRefJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = CacheRef{Tenant: ownBytes(j.Tenant), Namespace: ownBytes(j.Namespace), Cache: ownBytes(j.Cache)}
	return nil
}

// ownBytes copies s; the empty string is nil, as decoders return it.
func ownBytes(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}
