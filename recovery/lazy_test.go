package recovery

import (
	"regexp"
	"testing"
)

// TestPatternsCompile compiles every pattern the package compiles on
// first use (lazyRegexp): a pattern that does not compile fails here, not
// in the middle of a run's recovery.
func TestPatternsCompile(t *testing.T) {
	lazies := []func() *regexp.Regexp{goBuildRe, tsBuildRe, pyBuildRe, testRe, truncRe, infraRe, fileExt, backticked,
		quoted, goalToken, commandRe, testWord, sentenceEnd, testFuncRe, assertRe, tableRowRe, skipRe, commentRe,
		commentedAssertRe, tokenRe, assertiveName, goTestValues}
	for _, n := range narrowingTerms {
		lazies = append(lazies, n.re)
	}
	for _, d := range deferralMeanings {
		lazies = append(lazies, d.re)
	}
	for i, re := range lazies {
		if first, again := re(), re(); first == nil || first != again {
			t.Errorf("pattern %d: not compiled once", i)
		}
	}
	if first, again := defaultNormalizer(), defaultNormalizer(); first != again {
		t.Error("the normalizer is made more than once")
	}
}
