package store

import (
	"errors"
	"slices"
	"testing"
)

// contract is the suite every Store passes: one function per promise,
// each run on a fresh store.
var contract = []struct {
	name string
	test func(t *testing.T, h harness)
	// waits: on etcd the test waits out a lease's TTL in real time, so it
	// runs in parallel with the rest.
	waits bool
}{
	{"AnAbsentKeyIsTheZeroKV", testAbsentKey, false},
	{"APutSetsRevisionsAndVersion", testPutRevisions, false},
	{"RevisionsOnlyRise", testRevisionsOnlyRise, false},
	{"AFailedCompareIsNotAnError", testFailedCompare, false},
	{"EachComparisonHoldsOnlyWhenItShould", testComparisons, false},
	{"ATxnIsAllOrNothing", testAllOrNothing, false},
	{"AnInvalidTxnIsRefusedBeforeAnything", testInvalidTxn, false},
	{"RangeReadsAPrefixInKeyOrder", testRange, false},
	{"DeletePrefixDeletesOnlyUnderIt", testDeletePrefix, false},
	{"AReturnedValueIsTheCallers", testValueOwnership, false},
	{"LeasesAreGrantedRenewedAndRevoked", testLeaseLifecycle, false},
	{"RevokeDeletesAttachedKeysInOneRevision", testRevokeDeletesKeys, false},
	{"LeaseExpiryDeletesAttachedKeys", testLeaseExpiry, true},
	{"AWatchDeliversEveryEventInOrder", testWatchOrder, false},
	{"AWatchReplaysHistoryFromItsStart", testWatchReplay, false},
	{"AWatchFromACompactedRevisionErrs", testWatchCompacted, false},
	{"CompactRefusesTheCompactedAndTheFuture", testCompactBounds, false},
	{"AWatchEndsWhenClosedOrItsContextEnds", testWatchEnds, false},
	{"ALoneCandidateLeadsAtItsKeysCreateRevision", testCampaignAlone, false},
	{"ResignHandsLeadershipToTheNext", testResign, false},
	{"ADeposedLeadersWriteIsRefusedAfterRevoke", testDeposedByRevoke, false},
	{"ADeposedLeadersWriteIsRefusedAfterExpiry", testDeposedByExpiry, true},
	{"AGuardedTxnsOwnCompareFailsWithoutErrNotLeader", testGuardedOwnCompare, false},
	{"ACancelledCampaignWithdraws", testCampaignCancelled, false},
	{"ACampaignWithAnEndedLeaseFails", testCampaignEndedLease, false},
	{"AnObserverFollowsTheLeader", testObserver, false},
	{"AClosedStoreRefuses", testClosed, false},
}

func runContract(t *testing.T, newH newHarness) {
	for _, c := range contract {
		t.Run(c.name, func(t *testing.T) {
			if c.waits {
				t.Parallel()
			}
			c.test(t, newH(t))
		})
	}
}

func TestMemoryContract(t *testing.T)   { runContract(t, memoryHarness) }
func TestEmbeddedContract(t *testing.T) { runContract(t, embeddedHarness) }
func TestDialedContract(t *testing.T)   { runContract(t, dialedHarness) }

func testAbsentKey(t *testing.T, h harness) {
	kv, rev, err := h.store.Get(deadline(t), "nothing")
	if err != nil {
		t.Fatal(err)
	}
	if kv.Exists() || kv.Key != "" || kv.Value != nil || rev < 1 {
		t.Fatalf("absent key read as %+v at revision %d", kv, rev)
	}
}

func testPutRevisions(t *testing.T, h harness) {
	s := h.store
	before := revision(t, s)
	first := put(t, s, "k", "v1")
	if first != before+1 {
		t.Fatalf("a put on revision %d made revision %d", before, first)
	}
	kv := get(t, s, "k")
	if kv.CreateRevision != first || kv.ModRevision != first || kv.Version != 1 || string(kv.Value) != "v1" || kv.Lease != NoLease {
		t.Fatalf("after one put: %+v", kv)
	}
	second := put(t, s, "k", "v2")
	kv = get(t, s, "k")
	if kv.CreateRevision != first || kv.ModRevision != second || kv.Version != 2 || string(kv.Value) != "v2" {
		t.Fatalf("after two puts at %d and %d: %+v", first, second, kv)
	}
}

func testRevisionsOnlyRise(t *testing.T, h harness) {
	s := h.store
	last := revision(t, s)
	step := func(what string, rev int64, wantRise bool) {
		t.Helper()
		if rev < last || (rev > last) != wantRise {
			t.Fatalf("%s moved the revision from %d to %d (rise wanted: %v)", what, last, rev, wantRise)
		}
		last = rev
	}
	step("a put", put(t, s, "a", "1"), true)
	step("a read", revision(t, s), false)
	step("a failed compare", txn(t, s, Txn{If: []Cmp{Absent("a")}, Then: []Op{Put("a", nil)}}).Revision, false)
	step("a delete of an absent key", txn(t, s, Txn{Then: []Op{Delete("nothing")}}).Revision, false)
	step("a txn of three ops", txn(t, s, Txn{Then: []Op{Put("b", nil), Put("c", nil), Delete("a")}}).Revision, true)
	step("a delete", txn(t, s, Txn{Then: []Op{Delete("b")}}).Revision, true)
}

func testFailedCompare(t *testing.T, h harness) {
	s := h.store
	rev := put(t, s, "k", "v")
	res, err := s.Txn(deadline(t), Txn{If: []Cmp{ModRevisionIs("k", rev-1)}, Then: []Op{Put("k", []byte("lost"))}})
	if err != nil || res.Succeeded || res.Revision != rev {
		t.Fatalf("a stale compare: %+v, %v; want not succeeded at revision %d, no error", res, err, rev)
	}
	if kv := get(t, s, "k"); string(kv.Value) != "v" {
		t.Fatalf("a failed txn wrote: %+v", kv)
	}
	if res := txn(t, s, Txn{If: []Cmp{ModRevisionIs("k", rev)}, Then: []Op{Put("k", []byte("won"))}}); !res.Succeeded || res.Revision != rev+1 {
		t.Fatalf("a current compare: %+v", res)
	}
}

func testComparisons(t *testing.T, h harness) {
	s := h.store
	rev := put(t, s, "k", "v")
	cases := []struct {
		cmp  Cmp
		want bool
	}{
		{ModRevisionIs("k", rev), true}, {ModRevisionIs("k", rev+1), false},
		{CreateRevisionIs("k", rev), true}, {CreateRevisionIs("k", 0), false},
		{ValueIs("k", []byte("v")), true}, {ValueIs("k", []byte("w")), false},
		{Present("k"), true}, {Absent("k"), false},
		{ModRevisionIs("gone", 0), true}, {CreateRevisionIs("gone", 0), true},
		{Absent("gone"), true}, {Present("gone"), false},
		{ValueIs("gone", nil), false}, {ValueIs("gone", []byte{}), false},
	}
	for _, c := range cases {
		if got := txn(t, s, Txn{If: []Cmp{c.cmp}}).Succeeded; got != c.want {
			t.Errorf("%v: held %v, want %v", c.cmp, got, c.want)
		}
	}
}

func testAllOrNothing(t *testing.T, h harness) {
	s := h.store
	put(t, s, "a", "1")
	refused := Txn{If: []Cmp{Absent("a")}, Then: []Op{Put("b", nil), Delete("a")}}
	if txn(t, s, refused).Succeeded || get(t, s, "b").Exists() || !get(t, s, "a").Exists() {
		t.Fatal("a refused txn applied some of its ops")
	}
	before := revision(t, s)
	_, err := s.Txn(deadline(t), Txn{Then: []Op{Put("b", nil), PutWithLease("c", nil, 12345)}})
	wantErr(t, err, ErrLeaseNotFound)
	if get(t, s, "b").Exists() || revision(t, s) != before {
		t.Fatal("a txn refused for a missing lease applied its other ops")
	}
	res := txn(t, s, Txn{If: []Cmp{Present("a")}, Then: []Op{Put("b", nil), Put("c", nil), Delete("a")}})
	b, c := get(t, s, "b"), get(t, s, "c")
	if !res.Succeeded || b.ModRevision != res.Revision || c.ModRevision != res.Revision || get(t, s, "a").Exists() {
		t.Fatalf("a txn's ops not all at its revision %d: b %+v, c %+v", res.Revision, b, c)
	}
}

func testInvalidTxn(t *testing.T, h harness) {
	s := h.store
	tooMany := make([]Op, txnOpsMax+1)
	for i := range tooMany {
		tooMany[i] = Delete("k")
	}
	for name, tx := range map[string]Txn{
		"an empty key":                 {Then: []Op{Put("", nil)}},
		"a zero Op":                    {Then: []Op{{}}},
		"a zero Cmp":                   {If: []Cmp{{}}},
		"a key put twice":              {Then: []Op{Put("k", nil), Put("k", nil)}},
		"a put and a delete":           {Then: []Op{Delete("k"), Put("k", nil)}},
		"a put under a deleted prefix": {Then: []Op{DeletePrefix("a/"), Put("a/b", nil)}},
		"too many ops":                 {Then: tooMany},
		"an empty deleted prefix":      {Then: []Op{DeletePrefix("")}},
		"a value past the bound":       {Then: []Op{Put("k", make([]byte, txnBytesMax+1))}},
	} {
		if _, err := s.Txn(deadline(t), tx); !isInvalid(err) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if get(t, s, "k").Exists() || get(t, s, "a/b").Exists() {
		t.Fatal("an invalid txn wrote")
	}
}

func isInvalid(err error) bool { return errors.Is(err, ErrInvalid) }

func testRange(t *testing.T, h harness) {
	s := h.store
	for _, k := range []string{"b/2", "a/1", "b/1", "b0", "b/3"} {
		put(t, s, k, "v-"+k)
	}
	kvs, rev, err := s.Range(deadline(t), "b/")
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(kvs); !slices.Equal(got, []string{"b/1", "b/2", "b/3"}) || rev != revision(t, s) {
		t.Fatalf("range b/: %v at %d", got, rev)
	}
	if string(kvs[0].Value) != "v-b/1" {
		t.Fatalf("range b/ read %+v", kvs[0])
	}
	all, _, err := s.Range(deadline(t), "")
	if err != nil || len(all) != 5 {
		t.Fatalf("range of everything: %v, %v", keysOf(all), err)
	}
}

func testDeletePrefix(t *testing.T, h harness) {
	s := h.store
	for _, k := range []string{"s/1", "s/2", "s0", "t/1"} {
		put(t, s, k, "")
	}
	res := txn(t, s, Txn{Then: []Op{DeletePrefix("s/"), Delete("s/1")}}) // deletes may overlap
	kvs, _, _ := s.Range(deadline(t), "")
	if !res.Succeeded || !slices.Equal(keysOf(kvs), []string{"s0", "t/1"}) {
		t.Fatalf("after deleting s/: %v", keysOf(kvs))
	}
}

func testValueOwnership(t *testing.T, h harness) {
	s := h.store
	value := []byte("abc")
	txn(t, s, Txn{Then: []Op{Put("k", value)}})
	value[0] = 'X'
	kv := get(t, s, "k")
	kv.Value[1] = 'Y'
	if got := get(t, s, "k"); string(got.Value) != "abc" {
		t.Fatalf("the store kept a caller's slice: %q", got.Value)
	}
}

func testClosed(t *testing.T, h harness) {
	s := h.store
	w := watch(t, s, "", revision(t, s)+1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	_, _, err := s.Get(deadline(t), "k")
	wantErr(t, err, ErrClosed)
	_, err = s.Txn(deadline(t), Txn{Then: []Op{Put("k", nil)}})
	wantErr(t, err, ErrClosed)
	wantErr(t, watchErr(t, w), ErrClosed)
}

func keysOf(kvs []KV) []string {
	keys := make([]string, len(kvs))
	for i, kv := range kvs {
		keys[i] = kv.Key
	}
	return keys
}
