package workspace

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unicode"
)

// WriteFileAtomic writes data to path so that a crash leaves either the old
// file or the new one, never a mix: it writes a temporary file in the same
// directory, syncs it, sets perm (exactly: no umask), renames it over path
// and syncs the directory. Missing parent directories are created. On
// error the temporary file is removed; one left by a killed process is
// never committed by Commit and is removed by ResetTo.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return &Error{Op: "write", Path: path, Err: err}
	}
	f, err := createTemp(path, 0o600)
	if err != nil {
		return &Error{Op: "write", Path: path, Err: err}
	}
	tmp := f.Name()
	fail := func(err error) error {
		_ = f.Close()
		_ = os.Remove(tmp)
		return &Error{Op: "write", Path: path, Err: err}
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return &Error{Op: "write", Path: path, Err: err}
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return &Error{Op: "write", Path: path, Err: err}
	}
	return syncDir(dir)
}

// createTemp creates ".NAME.gaffer-tmp-RANDOM" beside path with perm,
// which the umask narrows as for any new file.
func createTemp(path string, perm os.FileMode) (*os.File, error) {
	dir, base := filepath.Split(path)
	for range 100 {
		name := filepath.Join(dir, "."+base+tempMarker+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fs.ErrExist
}

// syncDir makes a rename in dir durable. File systems and platforms that
// cannot sync a directory are not an error.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return &Error{Op: "sync", Path: dir, Err: err}
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, errors.ErrUnsupported) {
		return &Error{Op: "sync", Path: dir, Err: err}
	}
	return nil
}

// ExecDir returns the execution directory of a run, relative to the work
// tree's root and slash separated: "docs/gaffer/<date>-<tracker-id>-<slug>".
// Each part is reduced to letters, digits, dots and dashes; an empty
// tracker id is left out; the slug goes through Slugify. Convert it with
// filepath.FromSlash before using it as a file path.
func ExecDir(date, trackerID, slug string) string {
	var parts []string
	for _, p := range []string{date, trackerID} {
		if p = pathPart(p); p != "" {
			parts = append(parts, p)
		}
	}
	parts = append(parts, Slugify(slug))
	return path.Join("docs", "gaffer", strings.Join(parts, "-"))
}

// pathPart keeps ASCII letters, digits, dots and dashes, turning anything
// else into a dash, and trims dashes and dots from the ends.
func pathPart(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-.")
}

// maxSlug is the longest slug Slugify returns.
const maxSlug = 40

// Slugify turns a goal into a short directory name: lower case ASCII
// letters and digits, words joined by single dashes, accents dropped
// ("Réparer l'API" → "reparer-l-api"), at most 40 characters, cut at a
// word boundary when there is one. It never returns "": a goal with no
// letters or digits becomes "run".
func Slugify(goal string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(goal) {
		r = fold(r)
		if r < unicode.MaxASCII && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	s := b.String()
	if len(s) > maxSlug {
		cut := s[:maxSlug+1]
		if i := strings.LastIndexByte(cut, '-'); i >= maxSlug/2 {
			s = s[:i]
		} else {
			s = strings.TrimRight(s[:maxSlug], "-")
		}
	}
	if s == "" {
		return "run"
	}
	return s
}

// fold maps common Latin letters with diacritics to their base letter.
func fold(r rune) rune {
	if r < 0xc0 {
		return r
	}
	i := 0
	for _, f := range foldFrom {
		if f == r {
			return rune(foldTo[i])
		}
		i++
	}
	return r
}

// foldFrom's letters map, one for one, to foldTo's.
const (
	foldFrom = "àáâãäåāăąçćčďèéêëēėęěìíîïīįıñńňòóôõöøōőùúûüūůűųýÿžźżśšşřťţłğ"
	foldTo   = "aaaaaaaaacccdeeeeeeeeiiiiiiinnnoooooooouuuuuuuuyyzzzsssrttlg"
)
