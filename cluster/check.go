package cluster

import "fmt"

// checkEvent refuses an event that no state could make valid.
func checkEvent(ev Event) error {
	switch ev := ev.(type) {
	case BrokerJoined:
		return ev.Broker.Check()
	case BrokerLeft:
		return checkLeft(ev)
	case ObjectCreated:
		return ev.Spec.Check()
	case ObjectDeleted:
		return ev.ID.Check()
	case WriteDone, WriteFailed:
		return nil
	case Snapshot:
		return checkSnapshot(ev)
	case nil:
		return fmt.Errorf("%w: nil event", ErrInvalidEvent)
	}
	panic(fmt.Sprintf("felix/cluster: bug: event %T is not checked", ev))
}

func checkLeft(ev BrokerLeft) error {
	if ev.ID == "" {
		return fmt.Errorf("%w: a broker left without an id", ErrInvalidEvent)
	}
	return nil
}

func checkSnapshot(s Snapshot) error {
	if len(s.Brokers) > BrokersMax {
		return fmt.Errorf("%w: snapshot of %d brokers, more than %d", ErrInvalidEvent, len(s.Brokers), BrokersMax)
	}
	return firstError(checkBrokers(s.Brokers), checkObjects(s.Objects), checkAssignments(s.Assignments))
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func checkBrokers(bs []Broker) error {
	seen := make(map[string]bool, len(bs))
	for _, b := range bs {
		if err := b.Check(); err != nil {
			return err
		}
		if seen[b.ID] {
			return fmt.Errorf("%w: snapshot has broker %q twice", ErrInvalidEvent, b.ID)
		}
		seen[b.ID] = true
	}
	return nil
}

func checkObjects(os []ObjectSpec) error {
	seen := make(map[ObjectID]bool, len(os))
	for _, o := range os {
		if err := o.Check(); err != nil {
			return err
		}
		if seen[o.ID] {
			return fmt.Errorf("%w: snapshot has %v twice", ErrInvalidEvent, o.ID)
		}
		seen[o.ID] = true
	}
	return nil
}

func checkAssignments(as []StoredAssignment) error {
	seen := make(map[ShardID]bool, len(as))
	for _, a := range as {
		if err := checkStored(a); err != nil {
			return err
		}
		if seen[a.Shard] {
			return fmt.Errorf("%w: snapshot has an assignment of %v twice", ErrInvalidEvent, a.Shard)
		}
		seen[a.Shard] = true
	}
	return nil
}

// checkStored refuses what this package never writes: a store that holds
// it was written by something else, and placing around it would hide that.
func checkStored(a StoredAssignment) error {
	if err := a.Shard.Object.Check(); err != nil {
		return err
	}
	if a.Shard.Shard < 0 || a.Shard.Shard >= ShardsMax || a.Revision <= 0 || a.Assignment.Generation == 0 {
		return fmt.Errorf("%w: stored assignment of %v at revision %d: %v",
			ErrInvalidEvent, a.Shard, a.Revision, a.Assignment)
	}
	return nil
}
