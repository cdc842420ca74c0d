package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/etcdserver/api/membership"
)

// The raft leadership of an embedded member's cluster. A broker whose
// control plane leads keeps etcd's raft leadership off its own member
// (broker/cluster_raft_leader.go): losing that one broker then costs the
// cluster one election at a time, the control plane's or etcd's, never
// both back to back.

// RaftLeader reports whether this member leads its etcd cluster's raft.
func (m *Embedded) RaftLeader() bool {
	s := m.etcd.Server
	return s.Leader() == s.MemberID()
}

// RaftLeaderChanged is closed at the next change of the raft leader this
// member sees (take it again after each).
func (m *Embedded) RaftLeaderChanged() <-chan struct{} { return m.etcd.Server.LeaderChangedNotify() }

// Members is the names of the cluster's voting members, in name order.
func (m *Embedded) Members() []string {
	var names []string
	for _, mem := range m.voters() {
		names = append(names, mem.Name)
	}
	return names
}

// voters is the cluster's named voting members, in name order.
func (m *Embedded) voters() []*membership.Member {
	var out []*membership.Member
	for _, mem := range m.etcd.Server.Cluster().Members() {
		if !mem.IsLearner && mem.Name != "" {
			out = append(out, mem)
		}
	}
	slices.SortFunc(out, func(a, b *membership.Member) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ErrNoTransferee is HandOffRaftLeadership's answer when no other voting
// member took the raft leadership.
var ErrNoTransferee = errors.New("felix/cluster/store: no other etcd member took the raft leadership")

// HandOffRaftLeadership moves the raft leadership of the cluster to
// another voting member, trying them in the order rank gives (lowest
// first, then by name; a member rank refuses is not tried, and a nil rank
// accepts all alike) among those that answer on their peer URL within
// raftProbeWait, each for at most try (raft ends a transfer the
// transferee does not take after an election timeout). It returns the
// member that took it, "" when this member did not lead; ErrNoTransferee
// when none took it.
//
// A transfer costs writes: raft drops proposals while it is under way.
// So a member down, frozen or cut off from this one, which would not take
// it, is not offered it: the probe is its peer listener answering.
func (m *Embedded) HandOffRaftLeadership(ctx context.Context, rank func(name string) (int, bool), try time.Duration) (string, error) {
	s := m.etcd.Server
	for _, mem := range m.transferees(rank) {
		if !m.RaftLeader() {
			return "", nil
		}
		if !answers(ctx, mem) {
			continue
		}
		tctx, cancel := context.WithTimeout(ctx, try)
		err := s.MoveLeader(tctx, uint64(s.MemberID()), uint64(mem.ID))
		cancel()
		if err == nil {
			return mem.Name, nil
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("felix/cluster/store: handing the raft leadership off: %w", ctx.Err())
		}
	}
	if !m.RaftLeader() {
		return "", nil
	}
	return "", ErrNoTransferee
}

// transferees is the voting members but this one that rank accepts, in
// its order.
func (m *Embedded) transferees(rank func(name string) (int, bool)) []*membership.Member {
	ranks := map[string]int{}
	var out []*membership.Member
	for _, mem := range m.voters() { // by name: the stable sort keeps it among equals
		r, ok := 0, true
		if rank != nil {
			r, ok = rank(mem.Name)
		}
		if ok && mem.ID != m.etcd.Server.MemberID() {
			ranks[mem.Name] = r
			out = append(out, mem)
		}
	}
	slices.SortStableFunc(out, func(a, b *membership.Member) int { return cmp.Compare(ranks[a.Name], ranks[b.Name]) })
	return out
}

// raftProbeWait bounds the probe of a transferee: a member on a live
// network answers in a millisecond or so.
const raftProbeWait = 300 * time.Millisecond

// answers reports whether mem's peer listener answers its version request
// within raftProbeWait.
func answers(ctx context.Context, mem *membership.Member) bool {
	if len(mem.PeerURLs) == 0 {
		return false
	}
	pctx, cancel := context.WithTimeout(ctx, raftProbeWait)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodGet, mem.PeerURLs[0]+"/version", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
