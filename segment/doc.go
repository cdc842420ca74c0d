// Package segment is Felix's on-disk format: segment files, the records
// framed inside them, the sparse index beside each one, and the scan that
// recovery and verification run over a segment.
//
// It knows bytes, offsets and checksums. It must never know streams,
// shards or subscribers, never decide durability (that is the log's job,
// in engine/shardlog), and never trust a length before the checksum that
// covers it has been checked.
//
// # Files
//
// A log is a directory of segments. Each segment is named by the offset of
// its first record, zero-padded so names sort in offset order:
//
//	00000000000000000000.seg   records from offset 0
//	00000000000000000000.idx   its sparse index (sealed segments only)
//	00000000000000081920.seg   records from offset 81920 (the active segment)
//
// # Segment header (version 1, frozen)
//
// Every segment starts with a 64-byte header, little-endian:
//
//	 0       8       10      12              16
//	 +-------+-------+-------+---------------+
//	 | magic "FELIXSEG"      | ver   | hlen  | flags (u32)       |
//	 +-------------------------------+-------+-------------------+
//	16 base offset (u64)             24 created, unix ns (i64)
//	32 reserved, zero (24 bytes)
//	56 checksum (u64): xxh3 of bytes 0..56
//	64 first record
//
// Header flags: bit 0 compacted (HeaderFlagCompacted): the segment was
// written whole by compaction, its record offsets increase but may skip
// the records compaction dropped, and it covers every offset up to the next
// segment's base. Bits 1..31 are reserved and zero; a segment with an
// unknown bit refuses to open.
//
// # Record (version 1, frozen)
//
// Records follow the header back to back, little-endian:
//
//	0                   4                   8
//	+-------------------+-------------------+
//	| header sum (u32)  | body length (u32) |
//	+-------------------+-------------------+
//	| offset (u64)                          |
//	+-------------------+---------+---------+
//	| generation (u32)  | flags   | key len |
//	|                   | (u16)   | (u16)   |
//	+-------------------+---------+---------+
//	| timestamp, unix ns (i64)              |
//	+---------------------------------------+ 32
//	| key   (key len bytes)                 |
//	| value (body length - key len bytes)   |
//	+---------------------------------------+
//	| record sum (u64)                      |
//	+---------------------------------------+ 32 + body length + 8
//
// The header sum is the low 32 bits of xxh3 over bytes 4..32 of the record
// (everything in the header after the sum itself); it is checked before the
// body length is believed. The record sum is xxh3 over bytes 4 to the end of
// the value: header and body. The generation is the leader epoch that wrote
// the record; replication uses it to find where two logs diverge. Offsets
// are dense: each record's offset is one more than the one before it, and
// the first record of a segment carries the segment's base offset, except
// in a compacted segment, where offsets only increase, from the base on.
//
// Flag bits are owned by the layers above and registered here so they never
// collide: bit 0 tombstone (a cache delete), bit 1 expiry (the value starts
// with an 8-byte absolute expiry, unix ns), bit 2 control (engine metadata,
// never delivered to subscribers). Bits 3..15 are reserved and zero.
//
// # Sparse index (version 1, frozen)
//
// Written when a segment is sealed; never trusted. An index that is missing,
// fails its checksum, or disagrees with the segment it describes is rebuilt
// by scanning the segment. ReadIndexHead reads only its header and last
// entry, which the checksum cannot vouch for without the rest: for a log
// that checks every field it takes against the segment itself (its size,
// its last records), and loads the entries with DecodeIndex, checksum and
// all, before it uses one.
//
//	 0  magic "FELIXIDX" (8)
//	 8  version (u16) | entry size (u16) = 24 | reserved (u32)
//	16  base offset (u64)
//	24  data end: byte size of the segment described (u64)
//	32  next offset: one past the last record (u64)
//	40  entry count (u32) | reserved (u32)
//	48  entries, 24 bytes each:
//	      relative offset (u32) | byte position (u32) | generation (u32) |
//	      reserved, zero (u32)  | max timestamp so far (i64)
//	..  checksum (u64): xxh3 of everything before it
//
// An entry is added for the first record, for every record whose generation
// differs from the record before it (so the end of each generation is exact,
// which replication needs), and for the first record that starts at least
// IndexIntervalBytes after the previous entry's position.
// The timestamp is the largest record timestamp at or before that record,
// so a time seek can stop at the first entry whose timestamp reaches the
// target and retention by age can read a segment's newest time from its
// last entry and summary.
//
// # Damage
//
// Scan classifies the first record it cannot verify. In the active segment
// a torn tail (an unfinished write: the record runs past the end of the
// file, or its last byte and everything after it is zero, or it lies past
// the log's recovery point, ScanOptions.TornAfter, where the page cache may
// have written pages out of order) is reported as such so the log can cut
// it off; it was never made durable. Anything else,
// and any damage at all in a sealed segment, is a CorruptionError naming the
// file, the byte position and what is wrong; errors.Is(err, ErrCorrupt)
// matches it.
package segment
