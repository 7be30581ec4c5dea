package recovery

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

// TestRatioMatchesDifflib checks Ratio against ratios Python's difflib
// computed (testdata/difflib_ratios.py), including pairs where autojunk
// changes the result and one where the ratio is not symmetric.
func TestRatioMatchesDifflib(t *testing.T) {
	b, err := os.ReadFile("testdata/difflib_ratios.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		A, B       string
		AB, BA     float64
		NoAutojunk float64 `json:"noauto"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	autojunkMattered := 0
	for i, c := range cases {
		if got := Ratio(c.A, c.B); math.Abs(got-c.AB) > 1e-12 {
			t.Errorf("case %d: Ratio(a, b) = %v, difflib says %v", i, got, c.AB)
		}
		if got := Ratio(c.B, c.A); math.Abs(got-c.BA) > 1e-12 {
			t.Errorf("case %d: Ratio(b, a) = %v, difflib says %v", i, got, c.BA)
		}
		if math.Abs(c.AB-c.NoAutojunk) > 1e-12 {
			autojunkMattered++
		}
	}
	if len(cases) < 10 || autojunkMattered == 0 {
		t.Fatalf("fixture too weak: %d cases, %d where autojunk matters", len(cases), autojunkMattered)
	}
}

// naiveMatches is a direct transcription of difflib's recursion without
// the b2j index: for every span it tries every (i, j) pair. It checks the
// indexed version on inputs short enough for autojunk not to apply.
func naiveMatches(a, b []rune, alo, ahi, blo, bhi int) int {
	besti, bestj, best := alo, blo, 0
	for i := alo; i < ahi; i++ {
		for j := blo; j < bhi; j++ {
			k := 0
			for i+k < ahi && j+k < bhi && a[i+k] == b[j+k] {
				k++
			}
			if k > best {
				besti, bestj, best = i, j, k
			}
		}
	}
	if best == 0 {
		return 0
	}
	return best + naiveMatches(a, b, alo, besti, blo, bestj) + naiveMatches(a, b, besti+best, ahi, bestj+best, bhi)
}

func TestRatioAgainstNaive(t *testing.T) {
	inputs := []string{"", "a", "ab", "abcabc", "aaab", "banana", "bandana", "abcdefg", "gfedcba", "ab ab ab", "mississippi", "missouri", "日本語日本"}
	for _, a := range inputs {
		for _, b := range inputs {
			ra, rb := []rune(a), []rune(b)
			if got, want := matches(ra, rb), naiveMatches(ra, rb, 0, len(ra), 0, len(rb)); got != want {
				t.Errorf("matches(%q, %q) = %d, naive %d", a, b, got, want)
			}
		}
	}
}

// BenchmarkRatioTails measures Ratio on two normalized 4000-rune error
// tails (Config.MaxTailRunes), the size ShouldReplan compares.
func BenchmarkRatioTails(b *testing.B) {
	x := Normalize(strings.Repeat(errorPairs[2].a+"\n", 20))
	y := Normalize(strings.Repeat(errorPairs[2].b+"\n", 20))
	x, y = tail(x, 4000), tail(y, 4000)
	b.ResetTimer()
	for b.Loop() {
		Ratio(x, y)
	}
}
