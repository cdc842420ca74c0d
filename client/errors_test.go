package client

import (
	"context"
	"errors"
	"testing"

	"github.com/felixbroker/felix/netio/wire"
)

func TestEveryWireCodeHasItsOwnSentinel(t *testing.T) {
	owner := map[error]wire.Code{}
	for _, code := range wire.Codes() {
		s := SentinelFor(Code(code))
		if s == nil {
			t.Fatalf("code %v has no sentinel", code)
		}
		if prev, dup := owner[s]; dup {
			t.Fatalf("codes %v and %v share the sentinel %v", prev, code, s)
		}
		owner[s] = code
	}
	if len(codeSentinels) != len(wire.Codes()) {
		t.Fatalf("%d sentinels for %d codes", len(codeSentinels), len(wire.Codes()))
	}
}

// Every code the broker may answer with comes back as a *ServerError that
// errors.Is matches to its own sentinel and no other, with the name,
// message and details intact, and retryability from the code alone.
func TestEveryErrorCodeFromTheBrokerMapsToItsSentinel(t *testing.T) {
	codes := append(wire.Codes(), wire.Code(777)) // and one this version does not know
	b := newFakeBroker(t, func(fc *fakeConn, f wire.Frame) {
		var p wire.Publish
		if err := p.Decode(f, wire.Limits{}); err != nil {
			panic(err)
		}
		it := p.Records()
		it.Next()
		code := wire.Code(uint16(it.Record().Value[0]) | uint16(it.Record().Value[1])<<8)
		fc.fail(f.RequestID, code, "because "+code.String(), wire.Details{Offset: wire.U64(42)})
	})
	c := dialFake(t, b)
	ctx := testCtx(t)
	for _, code := range codes {
		_, err := c.Publish(ctx, testStream, []byte{byte(code), byte(code >> 8)})
		var se *ServerError
		if !errors.As(err, &se) {
			t.Fatalf("code %v: got %v, want a *ServerError", code, err)
		}
		if se.Code != Code(code) || se.Message != "because "+code.String() || se.Details.Offset == nil || *se.Details.Offset != 42 || se.Local {
			t.Fatalf("code %v: got %+v", code, se)
		}
		if !errors.Is(err, code) {
			t.Fatalf("code %v: errors.Is(err, the wire code) is false", code)
		}
		for other, s := range codeSentinels {
			if got, want := errors.Is(err, s), other == code; got != want {
				t.Fatalf("code %v: errors.Is(err, %v) = %v", code, s, got)
			}
		}
		if Retryable(err) != code.Retryable() || Ambiguous(err) != code.Ambiguous() {
			t.Fatalf("code %v: retryable %v ambiguous %v, the code says %v %v",
				code, Retryable(err), Ambiguous(err), code.Retryable(), code.Ambiguous())
		}
	}
}

func TestErrorsWithoutACodeAreRetriedUnlessTheCallerStopped(t *testing.T) {
	cases := []struct {
		err   error
		retry bool
	}{
		{ErrConnectionLost, true},
		{errTest, true},
		{ErrClosed, false},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{nil, false},
	}
	for _, tc := range cases {
		if got := Retryable(tc.err); got != tc.retry {
			t.Errorf("Retryable(%v) = %v, want %v", tc.err, got, tc.retry)
		}
	}
	if !Ambiguous(ErrConnectionLost) {
		t.Error("a lost connection must count as ambiguous")
	}
	local := localError(&wire.LimitError{Limit: wire.LimitKeyBytes, Max: 1, Got: 2})
	if Ambiguous(local) || Retryable(local) {
		t.Error("a request refused before sending is neither ambiguous nor retryable")
	}
}

func TestAHandshakeRefusalIsAServerError(t *testing.T) {
	b := newFakeBroker(t, nil)
	b.refuse = &wire.Error{Code: wire.CodeUnauthenticated, Message: "bad token"}
	_, err := Dial(testCtx(t), b.addr(), WithToken("t0ken"), WithName("billing"))
	if !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("dial: %v, want unauthenticated", err)
	}
	h := b.lastHello()
	if string(h.Token) != "t0ken" || string(h.ClientName) != "billing" || h.Features != wire.Features(DefaultFeatures) {
		t.Fatalf("HELLO carried token %q name %q features %v", h.Token, h.ClientName, h.Features)
	}
}
