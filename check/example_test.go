package check_test

import (
	"fmt"

	"github.com/felixbroker/felix/check"
)

// Two clients publish, a third reads the shard at the end: the record
// acknowledged at offset 1 is not there.
func ExampleCheck() {
	var rec check.Recorder
	shard := check.Shard{Stream: "t/ns/orders", Index: 0}
	a := rec.Invoke(1, 10, check.Publish{Shard: shard, Value: "a"})
	b := rec.Invoke(2, 11, check.Publish{Shard: shard, Value: "b"})
	a.Ok(20, check.Published{Offset: 0})
	b.Ok(21, check.Published{Offset: 1})
	c := rec.Invoke(3, 22, check.Publish{Shard: shard, Value: "c"})
	c.Unknown(40, "connection lost")
	read := rec.Invoke(4, 50, check.Read{Shard: shard, Subscription: "final", Final: true})
	read.Ok(60, check.Delivered{Records: []check.Record{{Offset: 0, Value: "a"}, {Offset: 2, Value: "c"}}})

	r := check.Check(rec.History(), check.Options{})
	fmt.Println(r.Valid())
	fmt.Println(&r)
	// Output:
	// false
	// INVALID: lost-write 1, unseen 1, poll-skip 1 over 4 ops (3 publishes, 2 acknowledged; 1 reads of 2 records), 0 broker acks, 0 shard logs, 0 linearizability partitions
	// lost-write: shard t/ns/orders/0: "b" acknowledged at 1, never read; sub "final" read up to 2
	// 	op 1 p2 publish t/ns/orders/0 "b" -> ok at 1 [t 11..21]
	// 	op 3 p4 read t/ns/orders/0 sub "final" from 0 final -> ok 2 records 0:"a" 2:"c" [t 50..60]
	// unseen: shard t/ns/orders/0: "b" acknowledged at 1, not in the final reads
	// 	op 1 p2 publish t/ns/orders/0 "b" -> ok at 1 [t 11..21]
	// poll-skip: shard t/ns/orders/0 sub "final": offset 2 delivered after 0, skipping 1
	// 	op 3 p4 read t/ns/orders/0 sub "final" from 0 final -> ok 2 records 0:"a" 2:"c" [t 50..60]
}
