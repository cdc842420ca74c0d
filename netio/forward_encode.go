package netio

import (
	"unsafe"

	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/netio/wire"
)

// forwardedRequestID is the request id inside every FORWARD this broker
// sends: the leader's relay assigns its own (the FORWARD's own id is the
// transport's). It is not 0, which a publish asking for an ack may not
// carry.
const forwardedRequestID = 1

// appendForwardedPublish appends a FORWARD carrying recs as one keyed
// PUBLISH_BATCH with ack per batch, built in place: the records are copied
// once, into the buffer the transport sends from. FlagKeyed always (the
// peer protocol's encoding: every record keeps its key, an empty one
// included); FlagTimestamp when a record carries its own time (0 lets the
// leader stamp it, as it would a direct publish).
func appendForwardedPublish(dst []byte, id engine.StreamID, recs []engine.Record, cred []byte) []byte {
	dst, fw := wire.BeginForward(dst, 0, cred)
	flags := wire.FlagKeyed
	for i := range recs {
		if recs[i].Timestamp != 0 {
			flags |= wire.FlagTimestamp
			break
		}
	}
	ref := wire.StreamRef{Tenant: bytesOf(id.Tenant), Namespace: bytesOf(id.Namespace), Stream: bytesOf(id.Name)}
	w := wire.BeginPublishBatch(dst, forwardedRequestID, ref, wire.AckPerBatch, flags)
	for i := range recs {
		w.Add(wire.Record{Key: recs[i].Key, Value: recs[i].Value, Timestamp: recs[i].Timestamp})
	}
	return fw.Finish(w.Finish())
}

// appendForwardedFrame appends a FORWARD carrying req as it came.
func appendForwardedFrame(dst []byte, req wire.Frame, cred []byte) []byte {
	dst, fw := wire.BeginForward(dst, 0, cred)
	dst = wire.AppendFrame(dst, req.Type, req.Flags, forwardedRequestID, req.Body)
	return fw.Finish(dst)
}

// bytesOf is s's bytes without a copy, for an encoder that only reads
// them: a stream's names on their way into a frame.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
