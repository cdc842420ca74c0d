package control

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/felixbroker/felix/cluster"
)

// The key layout, format 1 (frozen: a later format lives under another
// root, and the package doc's table is its reference).
const (
	// Root is the prefix of every key of format 1. One Range of it is the
	// whole state at one revision; one Watch of it follows every change.
	Root = "felix/v1/"

	brokersDir   = Root + "brokers/"
	catalogDir   = Root + "catalog/"
	placementDir = Root + "placement/"
	// Election is the control plane's election (store.Campaign puts its
	// candidates under Election + "/").
	Election    = Root + "election"
	electionDir = Election + "/"

	shardsPart   = "shards"
	unplacedPart = "unplaced"
	// shardDigits is the width of a shard number in a key, so key order is
	// shard order (cluster.ShardsMax is 1024).
	shardDigits = 4
)

// BrokerKey is where a broker registers.
func BrokerKey(id string) string { return brokersDir + id }

// CatalogKey is where an object's entry lives; its create revision is the
// object's Incarnation.
func CatalogKey(id cluster.ObjectID) string { return catalogDir + objectPath(id) }

// PlacementPrefix is the prefix of everything the control plane writes for
// one object: its shards' assignments and its unplaced report.
func PlacementPrefix(id cluster.ObjectID) string { return placementDir + objectPath(id) + "/" }

// AssignmentKey is where a shard's assignment lives.
func AssignmentKey(id cluster.ShardID) string {
	return fmt.Sprintf("%s%s/%0*d", PlacementPrefix(id.Object), shardsPart, shardDigits, id.Shard)
}

// UnplacedKey is where the control plane says why an object is not placed.
func UnplacedKey(id cluster.ObjectID) string { return PlacementPrefix(id) + unplacedPart }

// objectPath is "<kind>/<tenant>/<namespace>/<name>"; the parts hold no '/'
// (cluster.ObjectID.Check refuses one).
func objectPath(id cluster.ObjectID) string {
	return id.Kind.String() + "/" + id.Tenant + "/" + id.Namespace + "/" + id.Name
}

// keyKind says what a key of the layout holds.
type keyKind uint8

const (
	keyOther keyKind = iota // under Root but not of this format: ignored
	keyBroker
	keyCatalog
	keyAssignment
	keyUnplaced
	keyCandidate
)

// parsedKey is a key of the layout, taken apart.
type parsedKey struct {
	kind   keyKind
	broker string          // keyBroker
	shard  cluster.ShardID // keyCatalog, keyUnplaced: Object only; keyAssignment: both
}

// parseKey takes a key apart. A key outside the layout is keyOther; a key
// in it whose parts are malformed is an error matching ErrMalformed.
func parseKey(key string) (parsedKey, error) {
	switch {
	case strings.HasPrefix(key, brokersDir):
		return parseBrokerKey(strings.TrimPrefix(key, brokersDir))
	case strings.HasPrefix(key, catalogDir):
		return parseCatalogKey(key, strings.TrimPrefix(key, catalogDir))
	case strings.HasPrefix(key, placementDir):
		return parsePlacementKey(key, strings.TrimPrefix(key, placementDir))
	case strings.HasPrefix(key, electionDir):
		return parsedKey{kind: keyCandidate}, nil
	}
	return parsedKey{kind: keyOther}, nil
}

func parseBrokerKey(id string) (parsedKey, error) {
	if id == "" || strings.Contains(id, "/") {
		return parsedKey{}, fmt.Errorf("%w: broker key %q", ErrMalformed, BrokerKey(id))
	}
	return parsedKey{kind: keyBroker, broker: id}, nil
}

func parseCatalogKey(key, rest string) (parsedKey, error) {
	parts := strings.Split(rest, "/")
	if len(parts) != 4 {
		return parsedKey{}, fmt.Errorf("%w: catalog key %q", ErrMalformed, key)
	}
	id, err := parseObject(key, parts)
	return parsedKey{kind: keyCatalog, shard: cluster.ShardID{Object: id}}, err
}

// parsePlacementKey takes apart "<object>/shards/<NNNN>" and
// "<object>/unplaced".
func parsePlacementKey(key, rest string) (parsedKey, error) {
	parts := strings.Split(rest, "/")
	if len(parts) < 5 {
		return parsedKey{}, fmt.Errorf("%w: placement key %q", ErrMalformed, key)
	}
	id, err := parseObject(key, parts[:4])
	if err != nil {
		return parsedKey{}, err
	}
	switch {
	case len(parts) == 5 && parts[4] == unplacedPart:
		return parsedKey{kind: keyUnplaced, shard: cluster.ShardID{Object: id}}, nil
	case len(parts) == 6 && parts[4] == shardsPart:
		n, err := parseShard(parts[5])
		if err != nil {
			return parsedKey{}, fmt.Errorf("%w: placement key %q: %v", ErrMalformed, key, err)
		}
		return parsedKey{kind: keyAssignment, shard: cluster.ShardID{Object: id, Shard: n}}, nil
	}
	return parsedKey{}, fmt.Errorf("%w: placement key %q", ErrMalformed, key)
}

// parseShard reads a shard number of exactly shardDigits digits.
func parseShard(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || len(s) != shardDigits || n < 0 || n >= cluster.ShardsMax {
		return 0, fmt.Errorf("shard %q: want %d digits below %d", s, shardDigits, cluster.ShardsMax)
	}
	return n, nil
}

// parseObject reads [kind, tenant, namespace, name].
func parseObject(key string, parts []string) (cluster.ObjectID, error) {
	id := cluster.ObjectID{Tenant: parts[1], Namespace: parts[2], Name: parts[3]}
	switch parts[0] {
	case cluster.KindStream.String():
		id.Kind = cluster.KindStream
	case cluster.KindCache.String():
		id.Kind = cluster.KindCache
	}
	if err := id.Check(); err != nil {
		return cluster.ObjectID{}, fmt.Errorf("%w: key %q: %v", ErrMalformed, key, err)
	}
	return id, nil
}
