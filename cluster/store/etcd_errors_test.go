package store

import (
	"context"
	"errors"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestEtcdsCannotAnswerForNowErrorsAreErrUnavailable: the errors etcd
// gives while it cannot answer for now (a proposal timed out around a raft
// leader change, no leader, the member unreachable) match ErrUnavailable,
// which tells a caller a write may have been applied and a retry may
// succeed; the errors that mean something else do not.
func TestEtcdsCannotAnswerForNowErrorsAreErrUnavailable(t *testing.T) {
	s := &Etcd{}
	for _, err := range []error{rpctypes.ErrTimeoutDueToLeaderFail, rpctypes.ErrTimeoutDueToConnectionLost,
		rpctypes.ErrTimeout, rpctypes.ErrLeaderChanged, rpctypes.ErrNoLeader, rpctypes.ErrTooManyRequests,
		status.Error(codes.Unavailable, "connection refused")} {
		if got := s.fail("txn", err); !errors.Is(got, ErrUnavailable) {
			t.Errorf("%v: %v, want ErrUnavailable", err, got)
		}
	}
	for _, err := range []error{rpctypes.ErrCompacted, rpctypes.ErrLeaseNotFound, context.DeadlineExceeded,
		rpctypes.ErrPermissionDenied, status.Error(codes.InvalidArgument, "bad")} {
		if got := s.fail("txn", err); errors.Is(got, ErrUnavailable) {
			t.Errorf("%v: %v, which is not etcd unable to answer for now", err, got)
		}
	}
}
