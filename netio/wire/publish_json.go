package wire

import "encoding/json"

// publishJSON is the PUBLISH_JSON body: the fallback encoding for a keyed
// publish to a peer that did not negotiate FeaturePublishKeyed (and for any
// publish to one without FeatureBinaryPublish). Keys and values are base64,
// as encoding/json writes []byte:
//
//	{"stream": {"tenant": "t", "namespace": "ns", "stream": "orders"},
//	 "ack": "per_batch",
//	 "producer": {"shard": 0, "producer_id": 7, "epoch": 1, "sequence": 3},
//	 "records": [{"key": "dXNlci0x", "value": "aGk=", "timestamp": 1700000000000000000}]}
//
// "producer" is present only for an idempotent batch, whose ack is
// "per_batch"; "key" and "timestamp" are omitted when unset.
type publishJSON struct {
	Stream   StreamRef    `json:"stream"`
	Ack      AckMode      `json:"ack"`
	Producer *ProducerSeq `json:"producer,omitempty"`
	Records  []Record     `json:"records"`
}

// AppendPublishJSON appends a PUBLISH_JSON frame carrying recs, or nothing
// for no records. seq is nil for an ordinary publish; for an idempotent one
// the ack is per batch whatever ack says.
func AppendPublishJSON(dst []byte, requestID uint64, ref StreamRef, ack AckMode, seq *ProducerSeq, recs []Record) []byte {
	if len(recs) == 0 {
		return dst
	}
	if seq != nil {
		ack = AckPerBatch
	}
	return appendJSONFrame(dst, TypePublishJSON, requestID, publishJSON{Stream: ref, Ack: ack, Producer: seq, Records: recs})
}

func (p *Publish) decodeJSON(f Frame, lim Limits) error {
	if err := expectType(f, TypePublishJSON); err != nil {
		return err
	}
	list := p.list[:cap(p.list)]
	clear(list) // encoding/json merges into old elements; start clean
	j := publishJSON{Records: list[:0]}
	if err := json.Unmarshal(f.Body, &j); err != nil {
		return errMalformedJSON
	}
	*p = Publish{Stream: j.Stream, Ack: j.Ack, Count: len(j.Records), list: j.Records, json: true}
	if j.Producer != nil {
		p.Idempotent, p.Producer = true, *j.Producer
	}
	return p.checkJSON(lim)
}

func (p *Publish) checkJSON(lim Limits) error {
	if p.Count == 0 {
		return errEmptyBatch
	}
	if p.Idempotent && p.Ack != AckPerBatch {
		return errBadEnum
	}
	if err := lim.CheckStreamRef(p.Stream); err != nil {
		return err
	}
	if err := lim.CheckRecords(p.list); err != nil {
		return err
	}
	p.flags = RecordFlags(p.list...)
	p.Keyed, p.Timestamped = p.flags&FlagKeyed != 0, p.flags&FlagTimestamp != 0
	return nil
}

// appendJSONFrame appends a frame whose body is v as JSON. The types this
// package marshals cannot fail to; a failure is a bug.
func appendJSONFrame(dst []byte, t Type, requestID uint64, v any) []byte {
	js, err := json.Marshal(v)
	if err != nil {
		panic("felix/wire: " + t.String() + " did not marshal: " + err.Error())
	}
	return AppendFrame(dst, t, 0, requestID, js)
}

// AppendPublishFor appends recs as the publish frame a session with these
// negotiated features can carry, or nothing for no records:
//
//   - PUBLISH_JSON when a record has a key and the session lacks
//     FeaturePublishKeyed, or the session lacks FeatureBinaryPublish (for an
//     idempotent batch: FeatureIdempotentProducers);
//   - otherwise PUBLISH_IDEMPOTENT when seq is set, PUBLISH for one record,
//     PUBLISH_BATCH for more.
//
// It is the fallback rule in one place, for the client and for a broker
// forwarding to a peer.
func AppendPublishFor(dst []byte, session Features, requestID uint64, ref StreamRef, ack AckMode, seq *ProducerSeq, recs []Record) []byte {
	binary := FeatureBinaryPublish
	if seq != nil {
		binary = FeatureIdempotentProducers
	}
	flags := RecordFlags(recs...)
	if !session.Has(binary) || (flags&FlagKeyed != 0 && !session.Has(FeaturePublishKeyed)) {
		return AppendPublishJSON(dst, requestID, ref, ack, seq, recs)
	}
	switch {
	case seq != nil:
		return AppendPublishIdempotent(dst, requestID, ref, *seq, recs)
	case len(recs) == 1:
		return AppendPublish(dst, requestID, ref, ack, recs[0])
	}
	return AppendPublishBatch(dst, requestID, ref, ack, recs)
}
