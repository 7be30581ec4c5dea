package badger

import (
	"encoding/binary"
	"math"

	"github.com/gaffer-dev/gaffer/checkpoint"
)

// Key layout. Every per-run key starts with a kind byte and the
// length-prefixed run id, so one run's keys never share a prefix with
// another's.
const (
	kindCheckpoint = 'c' // c run seq(8, big endian)          -> checkpoint record
	kindWrite      = 'w' // w run seq(8) len(task) task index  -> write record
	kindBlob       = 'b' // b run sha256                       -> raw value
	kindLease      = 'l' // l run                              -> lease record
	kindIndex      = 'i' // i run                              -> run index record
	kindSummary    = 's' // s run                              -> the latest checkpoint's Summary (absent for none)
)

var (
	markerKey = []byte("m") // format marker: markerValue
	tokenKey  = []byte("t") // highest lease token reserved (see tokenSource), store-wide
)

// markerValue names the format and its version.
const markerValue = "gaffer-checkpoint/1"

func runPrefix(kind byte, runID string) []byte {
	k := make([]byte, 0, 1+binary.MaxVarintLen64+len(runID)+8+32)
	k = append(k, kind)
	k = binary.AppendUvarint(k, uint64(len(runID)))
	return append(k, runID...)
}

func cpKey(runID string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(runPrefix(kindCheckpoint, runID), seq)
}

func writesPrefix(runID string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(runPrefix(kindWrite, runID), seq)
}

func writeKey(runID string, seq uint64, w checkpoint.Write) []byte {
	k := writesPrefix(runID, seq)
	k = binary.AppendUvarint(k, uint64(len(w.TaskID)))
	k = append(k, w.TaskID...)
	return binary.AppendVarint(k, int64(w.Index))
}

func blobKey(runID string, ref blobRef) []byte {
	return append(runPrefix(kindBlob, runID), ref[:]...)
}

// seqOf returns the seq at the end of a checkpoint key or writes prefix.
func seqAt(key []byte, prefixLen int) (uint64, bool) {
	if len(key) < prefixLen+8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(key[prefixLen:]), true
}

// runOfIndexKey returns the run id of an index (or lease) key.
func runOfKey(key []byte) (string, bool) {
	if len(key) < 2 {
		return "", false
	}
	n, w := binary.Uvarint(key[1:])
	if w <= 0 || n > math.MaxInt32 || uint64(len(key)-1-w) != n {
		return "", false
	}
	return string(key[1+w:]), true
}
