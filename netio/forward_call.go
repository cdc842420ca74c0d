package netio

import (
	"github.com/felixbroker/felix/cluster/peer"
	"github.com/felixbroker/felix/engine"
	"github.com/felixbroker/felix/engine/shardlog"
	"github.com/felixbroker/felix/netio/wire"
)

// forwardCall is one forwarded request in flight: the peer.Call record the
// transport holds until Done, the FORWARD it sends, and who is told the
// answer (w for a publish's part, fw for a forwarded frame). Pooled by its
// Forwarder; Done is bound once, when the call is made.
type forwardCall struct {
	f      *Forwarder
	call   peer.Call
	buf    []byte
	broker string
	id     engine.StreamID
	shard  int

	w     shardlog.Waiter // a publish's part
	count int             // its records

	fw   FrameWaiter // a forwarded frame
	want wire.Type   // the answer its request has, besides ERROR
}

func newForwardCall(f *Forwarder) *forwardCall {
	fc := &forwardCall{f: f}
	fc.call.Done = fc.done
	return fc
}

// done is the call's Done, on a transport goroutine: it reads the answer
// (valid only here), gives the call back to the pool and tells the waiter.
func (fc *forwardCall) done(_ *peer.Call, answer wire.Frame, err error) {
	if fc.w != nil {
		fc.publishDone(answer, err)
		return
	}
	fc.frameDone(answer, err)
}

// publishDone tells a publish's part: the run the leader acknowledged, or
// why it was not.
func (fc *forwardCall) publishDone(answer wire.Frame, err error) {
	f, w := fc.f, fc.w
	var first, last int64
	var werr *wire.Error
	if err != nil {
		werr = fc.failed(err)
	} else {
		first, last, werr = fc.acked(answer)
	}
	f.put(fc)
	if werr != nil {
		w.Committed(0, -1, werr)
		return
	}
	w.Committed(first, last, nil)
}

// acked reads the leader's answer to a forwarded part: one PUBLISH_ACK run
// on the part's shard, covering every record sent, or an ERROR.
func (fc *forwardCall) acked(answer wire.Frame) (first, last int64, _ *wire.Error) {
	m := fc.f.cfg.Metrics
	m.Answered.Add(1)
	if answer.Type == wire.TypeError {
		m.Refused.Add(1)
		return 0, -1, leaderError(answer)
	}
	var a wire.PublishAck
	if answer.Type != wire.TypePublishAck || a.Decode(answer, fc.f.cfg.Limits) != nil || a.Len() != 1 {
		return 0, -1, fc.unexpected(answer)
	}
	r := a.Run(0)
	if int(r.Shard) != fc.shard || int(r.Count) != fc.count {
		return 0, -1, fc.unexpected(answer)
	}
	return int64(r.FirstOffset), int64(r.FirstOffset) + int64(r.Count) - 1, nil
}

// frameDone hands a forwarded frame's answer to its waiter, which copies
// it before the transport reuses its buffer.
func (fc *forwardCall) frameDone(answer wire.Frame, err error) {
	f, fw := fc.f, fc.fw
	var werr *wire.Error
	switch {
	case err != nil:
		werr = fc.failed(err)
	case answer.Type == wire.TypeError:
		f.cfg.Metrics.Answered.Add(1)
		f.cfg.Metrics.Refused.Add(1)
	case answer.Type != fc.want:
		f.cfg.Metrics.Answered.Add(1)
		werr = fc.unexpected(answer)
	default:
		f.cfg.Metrics.Answered.Add(1)
	}
	f.put(fc)
	if werr != nil {
		fw.Answered(wire.Frame{}, werr)
		return
	}
	fw.Answered(answer, nil)
}

// failed is the wire error of a request sent that got no answer.
func (fc *forwardCall) failed(err error) *wire.Error {
	fc.f.cfg.Metrics.Failed.Add(1)
	return failedError(err, fc.broker, fc.id, fc.shard)
}

func (fc *forwardCall) unexpected(answer wire.Frame) *wire.Error {
	return unexpectedAnswer(answer.Type, fc.broker, fc.id, fc.shard)
}
