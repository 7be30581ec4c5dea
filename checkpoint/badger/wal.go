package badger

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// logHeaderSize is the size of the header at the start of Badger's memtable
// logs (*.mem) and value logs (*.vlog): an encryption key id and a nonce.
const logHeaderSize = 20

// maxLogKey is the longest key Badger accepts in a log entry.
const maxLogKey = 1 << 16

// checkLogs reads the logs Badger replays when it opens a store: every
// memtable log and the newest value log. Badger reads each up to its first
// entry that does not check out and then truncates the file there, so
// whatever follows a damaged entry would be lost without a word: a run
// would go back to an older checkpoint. A log is damaged when an entry
// fails its checksum and its last byte, or any byte after it, is not zero.
//
// A process killed by a signal leaves a clean log: Badger writes a log
// through a memory map, entry after entry, into a file that is zeros after
// its last entry. The entry being copied when the process died ends in
// zeros and is followed by zeros only, so it is not damage (Badger drops
// it, and no caller was told it was written). Go copies more than 256
// bytes (amd64's memmove with AVX) body first, then its first 32 bytes,
// then its last 128: an entry cut in that copy may also begin with zeros
// where its header goes, its body written, and nothing after it checks
// out (headUnwritten). An entry whose last byte, or whose key length,
// happens to be zero and is damaged looks the same: it goes undetected.
// Leftovers (see openingFile) are not checked.
func checkLogs(dir string, leftovers map[string]bool) error {
	mems, _ := filepath.Glob(filepath.Join(dir, "*.mem"))
	vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	slices.Sort(vlogs) // fixed-width numbers: the newest sorts last
	for _, path := range append(slices.Clone(mems), vlogs...) {
		if leftovers[path] {
			continue
		}
		if err := checkLogHeader(path); err != nil {
			return logError(path, err)
		}
	}
	logs := mems
	if len(vlogs) > 0 {
		logs = append(logs, vlogs[len(vlogs)-1])
	}
	for _, path := range logs {
		if leftovers[path] {
			continue
		}
		if err := checkLog(path); err != nil {
			return logError(path, err)
		}
	}
	return nil
}

// logError is damage in the log at path, or, when the file could not be
// read (permission denied, a failing disk), that error as it is: the file
// may be whole.
func logError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return damagef("%s: %v", filepath.Base(path), err)
}

// checkLogHeader refuses a log shorter than its header. Badger makes a
// log at its full size (a memory map) and writes the header first, so it
// never leaves one: the file was cut (a careless copy, a full disk). Badger
// would treat an empty log as new — a memtable log's records, a value
// log's values gone — after growing it and writing a memtable log, and
// deletes a log cut in its header: the store would lose data or change
// while it is refused.
func checkLogHeader(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if info.Size() < logHeaderSize {
		return fmt.Errorf("the log is %d bytes, shorter than its %d-byte header (the file was cut); opening would lose what it held", info.Size(), logHeaderSize)
	}
	// The header starts with the id of the key the log is encrypted with,
	// 0 in gaffer's stores: another id is a damaged header, which Badger
	// finds only after it has written a new memtable log and the MANIFEST.
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var id [8]byte
	if _, err := f.ReadAt(id[:], 0); err != nil {
		return &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if keyID := binary.BigEndian.Uint64(id[:]); keyID != 0 {
		return fmt.Errorf("the header is damaged: it names encryption key %d, and the store is not encrypted", keyID)
	}
	return nil
}

// checkLog reports damage in one log file, as described at checkLogs.
func checkLog(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	size := info.Size()
	if size <= logHeaderSize {
		return nil
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, logHeaderSize, size-logHeaderSize), 1<<16)
	off := int64(logHeaderSize)
	for {
		n, end, ok := readLogEntry(r, off, size)
		if ok {
			off += n
			continue
		}
		// off is where Badger stops reading; end is where the entry it
		// stopped at would end, had it been written whole.
		last := lastNonZero(f, off, size)
		if last < 0 {
			return nil // zeros: the end of the log
		}
		if end <= size && !headUnwritten(f, off) {
			// The entry's last byte, or any byte after it, is written.
			if at := nonZeroFrom(f, end, size); at >= 0 {
				return fmt.Errorf("damaged entry at byte %d, with records after it (byte %d); opening would drop them", off, at)
			}
			if nonZeroFrom(f, end-1, size) == end-1 {
				return fmt.Errorf("the entry at byte %d fails its checksum; opening would drop it", off)
			}
		}
		// The entry looks cut short, as one being copied when the process
		// died. Its header may be damaged instead and claim more bytes than
		// it has: then records follow it.
		if at, err := entryWithin(f, off+1, last+1); err != nil || at >= 0 {
			return fmt.Errorf("damaged entry at byte %d, with records after it (byte %d); opening would drop them", off, at)
		}
		if end > size {
			return fmt.Errorf("damaged entry at byte %d claims %d bytes, more than the file holds; opening would drop it", off, end-off)
		}
		return nil
	}
}

// headUnwritten reports whether the entry at off has a zero key length,
// which no entry Badger writes has: its first bytes were not written yet,
// as a copy that stores the head after the body leaves it (checkLogs).
// Then the length its header gives says nothing, and only an entry that
// checks out after it makes it damage.
func headUnwritten(f *os.File, off int64) bool {
	var b [3]byte // meta, user meta, the key length's first byte
	if _, err := f.ReadAt(b[:], off); err != nil {
		return false
	}
	return b[2] == 0
}

// maxTailScan bounds the bytes entryWithin reads; a longer tail is damage.
const maxTailScan = 64 << 20

// entryWithin returns the offset of the first entry in [from, to) that
// checks out, or -1.
func entryWithin(f *os.File, from, to int64) (int64, error) {
	if to <= from {
		return -1, nil
	}
	if to-from > maxTailScan {
		return from, fmt.Errorf("%d bytes follow a damaged entry", to-from)
	}
	buf := make([]byte, to-from)
	if _, err := f.ReadAt(buf, from); err != nil && !errors.Is(err, io.EOF) {
		return from, err
	}
	for i := range buf {
		if entryAt(buf[i:]) {
			return from + int64(i), nil
		}
	}
	return -1, nil
}

// entryAt reports whether b starts with an entry that checks out, read as
// readLogEntry reads one.
func entryAt(b []byte) bool {
	if len(b) < 2 {
		return false
	}
	p := 2
	var lens [3]uint64
	for i := range lens {
		v, n := binary.Uvarint(b[p:])
		if n <= 0 {
			return false
		}
		lens[i], p = v, p+n
	}
	klen, vlen := lens[0], lens[1]
	if klen == 0 || klen > maxLogKey || vlen > uint64(len(b)) {
		return false
	}
	end := p + int(klen+vlen)
	if end+4 > len(b) {
		return false
	}
	return binary.BigEndian.Uint32(b[end:]) == crc32.Checksum(b[:end], castagnoli)
}

// lastNonZero returns the offset of the last byte at or after from that is
// not zero, or -1.
func lastNonZero(f *os.File, from, size int64) int64 {
	last := int64(-1)
	for at := nonZeroFrom(f, from, size); at >= 0; at = nonZeroFrom(f, last+1, size) {
		last = at
		// Skip to the end of this run of bytes that are not all zero.
		buf := make([]byte, 1<<16)
		for off := at; off < size; {
			n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
			zero := true
			for i := range n {
				if buf[i] != 0 {
					last, zero = off+int64(i), false
				}
			}
			off += int64(n)
			if zero || n == 0 || err != nil {
				break
			}
		}
	}
	return last
}

// readLogEntry reads one entry at off the way Badger does: a header (meta
// and user meta bytes, then the key length, value length and expiry as
// uvarints), the key, the value and a CRC-32C of all of it. ok says the
// entry checks out; n is its length. When it does not, end is the offset
// its header says it ends at (off+1 when even the header is unreadable).
func readLogEntry(r *bufio.Reader, off, size int64) (n, end int64, ok bool) {
	h := crc32.New(castagnoli)
	var hdr []byte
	b, err := r.Peek(2)
	if err != nil {
		return 0, off + 1, false
	}
	hdr = append(hdr, b...)
	_, _ = r.Discard(2)
	var lens [3]uint64
	for i := range lens {
		v, err := binary.ReadUvarint(byteCounter{r, &hdr})
		if err != nil {
			return 0, off + int64(len(hdr)), false
		}
		lens[i] = v
	}
	klen, vlen := lens[0], lens[1]
	end = off + int64(len(hdr)) + 4
	if klen > maxLogKey || vlen > uint64(size) {
		return 0, size + 1, false
	}
	end += int64(klen + vlen)
	if klen == 0 && vlen == 0 && hdr[0] == 0 && hdr[1] == 0 && lens[2] == 0 {
		return 0, end, false // zeros: the end of the log
	}
	if end > size {
		return 0, end, false
	}
	h.Write(hdr)
	if _, err := io.CopyN(h, r, int64(klen+vlen)); err != nil {
		return 0, end, false
	}
	var sum [4]byte
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return 0, end, false
	}
	if binary.BigEndian.Uint32(sum[:]) != h.Sum32() {
		return 0, end, false
	}
	return end - off, end, true
}

// byteCounter is an io.ByteReader that keeps the bytes it reads.
type byteCounter struct {
	r   *bufio.Reader
	buf *[]byte
}

func (b byteCounter) ReadByte() (byte, error) {
	c, err := b.r.ReadByte()
	if err == nil {
		*b.buf = append(*b.buf, c)
	}
	return c, err
}

// nonZeroFrom returns the offset of the first byte at or after from that is
// not zero, or -1. It skips the holes of a sparse file.
func nonZeroFrom(f *os.File, from, size int64) int64 {
	buf := make([]byte, 1<<16)
	for off := from; off < size; {
		data, err := seekData(f, off)
		if err != nil || data >= size {
			return -1
		}
		off = max(off, data)
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		for i := range n {
			if buf[i] != 0 {
				return off + int64(i)
			}
		}
		if n == 0 || err != nil && !errors.Is(err, io.EOF) {
			return -1
		}
		off += int64(n)
	}
	return -1
}
