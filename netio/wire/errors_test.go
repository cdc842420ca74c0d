package wire

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestTheContractsErrorCodesExist(t *testing.T) {
	for _, name := range strings.Fields(`malformed_frame frame_too_large unknown_frame_type
		unsupported_version handshake_required handshake_timeout idle_timeout feature_not_negotiated
		invalid_argument limit_exceeded unauthenticated forbidden quota_exceeded not_found
		already_exists offset_below_retention offset_past_tail not_leader no_quorum storage_full
		storage_failed overloaded timeout shutting_down precondition_failed cache_watch_lagged
		producer_unknown sequence_gap claim_not_held internal`) {
		c, ok := CodeByName(name)
		if !ok || c.String() != name {
			t.Errorf("no code named %s", name)
		}
	}
}

func TestOnlyUnrecoverableCodesAreNotRetried(t *testing.T) {
	// The contract's short list, and not_found retried on purpose.
	for c, want := range map[Code]bool{
		CodeForbidden: false, CodeOffsetBelowRetention: false, CodeNotFound: true,
		CodeNotLeader: true, CodeNoQuorum: true, CodeInternal: true, Code(4242): true,
	} {
		if c.Retryable() != want {
			t.Errorf("%v retryable = %v, want %v", c, c.Retryable(), want)
		}
	}
	if Retryable(nil) || !Retryable(errors.New("connection reset")) {
		t.Error("Retryable(nil) or Retryable(uncoded) wrong")
	}
	wrapped := fmt.Errorf("publish: %w", &Error{Code: CodeForbidden})
	if Retryable(wrapped) || CodeOf(wrapped) != CodeForbidden {
		t.Error("a wrapped forbidden is retried")
	}
	if !CodeNoQuorum.Ambiguous() || CodeNotLeader.Ambiguous() {
		t.Error("ambiguity: no_quorum may have applied, not_leader did not")
	}
}

func TestDecodedErrorsMatchPerCodeSentinels(t *testing.T) {
	frame := AppendError(nil, 7, &Error{Code: CodeSequenceGap, Message: "expected 42",
		Details: Details{ExpectedSequence: U64(42)}})
	var e Error
	if err := e.Decode(mustFrame(t, frame), Limits{}); err != nil {
		t.Fatal(err)
	}
	var err error = fmt.Errorf("client: %w", &e)
	if !errors.Is(err, CodeSequenceGap) || errors.Is(err, CodeNotLeader) {
		t.Fatalf("errors.Is against sentinels: %v", err)
	}
	var got *Error
	if !errors.As(err, &got) || *got.Details.ExpectedSequence != 42 || got.Name != "sequence_gap" {
		t.Fatalf("details lost: %+v", got)
	}
	if err.Error() != "client: felix/wire: sequence_gap: expected 42" {
		t.Fatalf("text: %q", err.Error())
	}
}

func TestAnUnknownCodeKeepsItsName(t *testing.T) {
	frame := AppendError(nil, 7, &Error{Code: 777, Name: "from_the_future"})
	var e Error
	if err := e.Decode(mustFrame(t, frame), Limits{}); err != nil {
		t.Fatal(err)
	}
	if e.Error() != "felix/wire: from_the_future" || !Retryable(&e) {
		t.Fatalf("%v", &e)
	}
}

func TestALongErrorMessageIsCutAtACharacterBoundary(t *testing.T) {
	msg := strings.Repeat("é", 40000) // 80,000 bytes
	var e Error
	if err := e.Decode(mustFrame(t, AppendError(nil, 1, &Error{Code: CodeInternal, Message: msg})), Limits{}); err != nil {
		t.Fatal(err)
	}
	if len(e.Message) != 65534 || !strings.HasPrefix(msg, e.Message) {
		t.Fatalf("message of %d bytes", len(e.Message))
	}
}

func TestErrorFromKeepsTheCodeAndNamesTheLimit(t *testing.T) {
	le := &LimitError{Limit: LimitKeyBytes, Max: 8, Got: 9}
	if e := ErrorFrom(fmt.Errorf("decode: %w", le)); e.Code != CodeLimitExceeded || e.Details.Limit != LimitKeyBytes || e.Details.LimitValue != 8 {
		t.Fatalf("%+v", e)
	}
	if e := ErrorFrom(CodeOverloaded); e.Code != CodeOverloaded {
		t.Fatalf("%+v", e)
	}
	if e := ErrorFrom(errors.New("boom")); e.Code != CodeInternal || e.Message != "boom" {
		t.Fatalf("%+v", e)
	}
}

// TestTheProtocolDocListsEveryCode reads the error table of
// docs/protocol.md and holds it to codeList, both ways.
func TestTheProtocolDocListsEveryCode(t *testing.T) {
	doc, err := os.ReadFile("../../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| (\d+) \| ` + "`" + `(\w+)` + "`" + ` \| (yes|no) \| (yes|no) \|`)
	rows := row.FindAllStringSubmatch(string(doc), -1)
	if len(rows) != len(codeList) {
		t.Errorf("docs/protocol.md lists %d codes, errors.go %d", len(rows), len(codeList))
	}
	for _, r := range rows {
		n, _ := strconv.Atoi(r[1])
		info, ok := codeIndex[Code(n)]
		if !ok || info.name != r[2] || info.retry != (r[3] == "yes") || info.ambiguous != (r[4] == "yes") {
			t.Errorf("docs row %q disagrees with errors.go %+v", r[0], info)
		}
	}
}

func TestNegotiateChoosesTheHighestCommonVersionAndTheIntersection(t *testing.T) {
	v, f, err := Negotiate(Hello{VersionMin: 1, VersionMax: 9, Features: FeaturePublishKeyed | FeatureCache | 1<<40},
		FeaturesAll&^FeatureCache)
	if err != nil || v != ProtocolVersion || f != FeaturePublishKeyed {
		t.Fatalf("version %d features %v err %v", v, f, err)
	}
	for _, h := range []Hello{{VersionMin: 2, VersionMax: 3}, {VersionMin: 0, VersionMax: 0}, {VersionMin: 1, VersionMax: 0}} {
		if _, _, err := Negotiate(h, FeaturesAll); !errors.Is(err, CodeUnsupportedVersion) {
			t.Errorf("%+v: %v", h, err)
		}
	}
}

func TestFeaturePublishKeyedIsTheContractsBit(t *testing.T) {
	if FeaturePublishKeyed != 0x0040 || FlagKeyed != 0x0040 {
		t.Fatal("FLAG_BINARY_PUBLISH_KEYED is 0x0040 by contract")
	}
	if FeaturesAll&FeaturesReserved != 0 || (FeaturePublishKeyed|FeatureCache).String() != "cache|publish_keyed" {
		t.Fatalf("feature bits: %v", FeaturesAll)
	}
}

func TestRequiredFeatures(t *testing.T) {
	for _, c := range []struct {
		t     Type
		flags Flags
		want  Features
	}{
		{TypePublishBatch, FlagKeyed, FeatureBinaryPublish | FeaturePublishKeyed},
		{TypePublishBatch, 0, FeatureBinaryPublish},
		{TypePublishJSON, 0, 0},
		{TypePublishIdempotent, FlagKeyed, FeatureIdempotentProducers | FeaturePublishKeyed},
		{TypeCacheWatchEvent, 0, FeatureCache | FeatureCacheWatch},
		{TypeCounterAdd, 0, FeatureCounters},
		{TypeGroupPoll, 0, FeatureConsumerGroups},
		{TypeHello, 0, 0},
	} {
		if got := RequiredFeatures(c.t, c.flags); got != c.want {
			t.Errorf("%v %#x: %v, want %v", c.t, c.flags, got, c.want)
		}
	}
}
