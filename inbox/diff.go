package inbox

import "strings"

// diffFile is one changed file of a phase's diff, as the run page shows
// it: its stat and its lines of the patch, one block per file.
type diffFile struct {
	Path           string
	Added, Deleted int
	Binary         bool
	Lines          []diffLine // nil when the patch shown does not reach it
}

// diffLine is a line of a file's patch: its class ("add", "del", "hunk",
// "ctx", "meta"), its gutter ("+", "-" or " ": the mark that reads
// without colour) and its text after the gutter.
type diffLine struct {
	Class, Gutter, Text string
}

// Classes of diffLine.
const (
	lineAdd  = "add"
	lineDel  = "del"
	lineHunk = "hunk"
	lineCtx  = "ctx"
	lineMeta = "meta"
)

// splitPatch splits a git patch into its files, in the patch's order,
// each named by its path after the change (before it, for a deletion).
func splitPatch(patch string) []diffFile {
	var files []diffFile
	inHunk := false
	for line := range strings.Lines(patch) {
		line = strings.TrimSuffix(line, "\n")
		if rest, ok := strings.CutPrefix(line, "diff --git "); ok {
			files = append(files, diffFile{Path: headerPath(rest)})
			inHunk = false
			continue
		}
		if len(files) == 0 {
			continue // nothing before the first file's header
		}
		f := &files[len(files)-1]
		var l diffLine
		switch {
		case strings.HasPrefix(line, "@@"):
			l, inHunk = diffLine{Class: lineHunk, Gutter: " ", Text: line}, true
		case !inHunk:
			// The header: the block's title names the file, so its
			// "index", "---" and "+++" lines are left out; a mode, a
			// rename, a binary file are said.
			if p, ok := strings.CutPrefix(line, "+++ b/"); ok {
				f.Path = p
			}
			if strings.HasPrefix(line, "Binary files ") {
				f.Binary = true
			}
			if strings.HasPrefix(line, "index ") || strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ") {
				continue
			}
			l = diffLine{Class: lineMeta, Gutter: " ", Text: line}
		case strings.HasPrefix(line, "+"):
			l = diffLine{Class: lineAdd, Gutter: "+", Text: line[1:]}
		case strings.HasPrefix(line, "-"):
			l = diffLine{Class: lineDel, Gutter: "-", Text: line[1:]}
		case strings.HasPrefix(line, " "):
			l = diffLine{Class: lineCtx, Gutter: " ", Text: line[1:]}
		default: // "\ No newline at end of file", or a cut line
			l = diffLine{Class: lineMeta, Gutter: " ", Text: line}
		}
		f.Lines = append(f.Lines, l)
	}
	return files
}

// headerPath is the path of a "diff --git a/P b/P" header's rest: P when
// both halves agree (a path with spaces), else what follows the last
// " b/"; "+++ b/" corrects it for a rename.
func headerPath(rest string) string {
	if n := len(rest); n%2 == 1 {
		a, b := rest[:n/2], rest[n/2+1:]
		if strings.HasPrefix(a, "a/") && strings.HasPrefix(b, "b/") && a[2:] == b[2:] {
			return b[2:]
		}
	}
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return rest
}

// filesOf is the run page's blocks of a phase's diff: each file of the
// stat with its patch lines, then any file of the patch the stat did not
// name.
func filesOf(stats []fileStat, patch string) []diffFile {
	parsed := splitPatch(patch)
	used := make([]bool, len(parsed))
	var files []diffFile
	for _, st := range stats {
		f := diffFile{Path: st.Path, Added: st.Added, Deleted: st.Deleted, Binary: st.Binary}
		for i, p := range parsed {
			if !used[i] && p.Path == st.Path {
				used[i], f.Lines, f.Binary = true, p.Lines, f.Binary || p.Binary
				break
			}
		}
		files = append(files, f)
	}
	for i, p := range parsed {
		if !used[i] {
			files = append(files, p)
		}
	}
	return files
}
