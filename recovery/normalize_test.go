package recovery

import (
	"strings"
	"testing"
)

func TestNormalizeFolds(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"ansi", "\x1b[31mFAIL\x1b[0m \x1b]0;title\x07done", "fail done"},
		{"go position", "/home/ci/src/app/parse.go:12:3: undefined: Foo", "parse.go:<n>:<n>: undefined: foo"},
		{"go test line", "    parse_test.go:42: got 3, want 4", "parse_test.go:<n>: got 3, want 4"},
		{"temp dir with file", "/tmp/TestLoad2871543/001/config.yaml: no such file", "config.yaml: no such file"},
		{"temp dir", "open /tmp/go-build3344/b001: permission denied", "open <tmp>: permission denied"},
		{"macos temp", "/var/folders/x1/abc_123/T/TestX99/001/a.go:3: boom", "a.go:<n>: boom"},
		{"windows temp", `C:\Users\bob\AppData\Local\Temp\pytest-7\test_a0\x.py:3: AssertionError`, "x.py:<n>: assertionerror"},
		{"hex address", "main.f(0xc000012345, 0x1f)", "main.f(<addr>, <addr>)"},
		{"goroutine", "goroutine 17 [running]:", "goroutine <n> [running]:"},
		{"duration", "--- FAIL: TestX (0.03s)\nok pkg 1m2.5s", "--- fail: testx (<dur>)\nok pkg <dur>"},
		{"sha", "HEAD is now at 3f5fa11 fix; tree 9c1185a5c5e9fc54612808977ee8f548b2258d31", "head is now at <sha> fix; tree <sha>"},
		{"hex word kept", "decade added facade 1234567", "decade added facade 1234567"},
		{"uuid", "run 123e4567-e89b-12d3-a456-426614174000 failed", "run <uuid> failed"},
		{"timestamp", "2026-11-25T21:14:54.123Z error; at 2026/11/25 21:14:54 retry; 09:15:00", "<time> error; at <time> retry; <time>"},
		{"python line", `  File "/srv/app/models.py", line 42, in save`, `file "models.py", line <n>, in save`},
		{"typescript position", "src/components/Button.tsx(12,5): error TS2322: x", "button.tsx(<n>,<n>): error ts2322: x"},
		{"node stack", "    at Object.<anonymous> (/home/u/p/src/a.test.ts:12:5)", "at object.<anonymous> (a.test.ts:<n>:<n>)"},
		{"blank lines and blanks", "a   b\r\n\r\n\t\tc  ", "a b\nc"},
		{"lone slashes kept", "a / b", "a / b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Normalize(c.in); got != c.want {
				t.Errorf("Normalize(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
		})
	}
}

// errorPairs are real error outputs of Go, TypeScript and Python tools,
// two at a time: same is true when both are the same bug seen in two runs
// (other line numbers, temp dirs, addresses, times), false when they are
// two different bugs.
var errorPairs = []struct {
	name string
	same bool
	a, b string
}{
	{"go test assertion, other line and duration", true,
		"--- FAIL: TestParseDuration (0.00s)\n    parse_test.go:42: ParseDuration(\"1h\") = 0s, want 1h0m0s\nFAIL\nFAIL\tgithub.com/acme/app/parse\t0.012s",
		"--- FAIL: TestParseDuration (0.01s)\n    parse_test.go:47: ParseDuration(\"1h\") = 0s, want 1h0m0s\nFAIL\nFAIL\tgithub.com/acme/app/parse\t0.015s"},
	{"go build undefined, other temp dir and position", true,
		"# github.com/acme/app/store\n/tmp/gaffer-run-8812/wt/store/badger.go:88:14: undefined: badger.DefaultOptionz\nFAIL\tgithub.com/acme/app/store [build failed]",
		"# github.com/acme/app/store\n/tmp/gaffer-run-1907/wt/store/badger.go:91:9: undefined: badger.DefaultOptionz\nFAIL\tgithub.com/acme/app/store [build failed]"},
	{"go panic, other goroutine and addresses", true,
		"panic: runtime error: invalid memory address or nil pointer dereference [recovered]\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x5d3a2f]\n\ngoroutine 7 [running]:\ngithub.com/acme/app/cache.(*LRU).Get(0x0, {0xc000014090, 0x3})\n\t/home/runner/work/app/cache/lru.go:57 +0x2f",
		"panic: runtime error: invalid memory address or nil pointer dereference [recovered]\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x5d41bf]\n\ngoroutine 23 [running]:\ngithub.com/acme/app/cache.(*LRU).Get(0x0, {0xc0000a6010, 0x3})\n\t/home/ci/build/app/cache/lru.go:61 +0x2f"},
	{"go test timeout, other times", true,
		"panic: test timed out after 10m0s\n\trunning tests:\n\t\tTestServeLease (9m59s)\n\ngoroutine 112 [chan receive, 9 minutes]:\ntesting.(*T).Run(0xc0001a2340, {0x8a1f0e, 0xe}, 0x8c2d18)",
		"panic: test timed out after 10m0s\n\trunning tests:\n\t\tTestServeLease (10m0s)\n\ngoroutine 98 [chan receive, 9 minutes]:\ntesting.(*T).Run(0xc000082b60, {0x8a1f0e, 0xe}, 0x8c2d18)"},
	{"go race, other addresses and goroutines", true,
		"==================\nWARNING: DATA RACE\nWrite at 0x00c0001c4018 by goroutine 9:\n  github.com/acme/app/metrics.(*Counter).Inc()\n      /src/app/metrics/counter.go:21 +0x44\nPrevious read at 0x00c0001c4018 by goroutine 8:\n  github.com/acme/app/metrics.(*Counter).Value()\n      /src/app/metrics/counter.go:27 +0x3a",
		"==================\nWARNING: DATA RACE\nWrite at 0x00c000212a98 by goroutine 15:\n  github.com/acme/app/metrics.(*Counter).Inc()\n      /src/app/metrics/counter.go:21 +0x44\nPrevious read at 0x00c000212a98 by goroutine 14:\n  github.com/acme/app/metrics.(*Counter).Value()\n      /src/app/metrics/counter.go:27 +0x3a"},
	{"go: two different test assertions", false,
		"--- FAIL: TestParseDuration (0.00s)\n    parse_test.go:42: ParseDuration(\"1h\") = 0s, want 1h0m0s\nFAIL",
		"--- FAIL: TestLoadConfig (0.00s)\n    config_test.go:18: LoadConfig: open testdata/app.yaml: no such file or directory\nFAIL"},
	{"go: undefined vs type mismatch", false,
		"# github.com/acme/app/store\nstore/badger.go:88:14: undefined: badger.DefaultOptionz",
		"# github.com/acme/app/store\nstore/badger.go:88:14: cannot use opts (variable of type Options) as badger.Options value in argument to badger.Open"},
	{"go: nil pointer vs index out of range", false,
		"panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x5d3a2f]",
		"panic: runtime error: index out of range [5] with length 3\n\ngoroutine 7 [running]:\nmain.pick(...)"},
	{"tsc: same type error, other file position", true,
		"src/api/client.ts(42,7): error TS2322: Type 'string | undefined' is not assignable to type 'string'.\n  Type 'undefined' is not assignable to type 'string'.",
		"src/api/client.ts(45,7): error TS2322: Type 'string | undefined' is not assignable to type 'string'.\n  Type 'undefined' is not assignable to type 'string'."},
	{"jest: same failing expectation, other stack and time", true,
		"FAIL src/cart.test.ts (5.123 s)\n  ● Cart › applies discount\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: 90\n    Received: 100\n\n      at Object.<anonymous> (/home/runner/work/shop/src/cart.test.ts:14:30)",
		"FAIL src/cart.test.ts (4.871 s)\n  ● Cart › applies discount\n\n    expect(received).toBe(expected) // Object.is equality\n\n    Expected: 90\n    Received: 100\n\n      at Object.<anonymous> (/tmp/wt-31337/shop/src/cart.test.ts:16:30)"},
	{"tsc: missing property vs cannot find module", false,
		"src/api/client.ts(42,7): error TS2741: Property 'headers' is missing in type '{ url: string; }' but required in type 'Request'.",
		"src/api/client.ts(3,22): error TS2307: Cannot find module './transport' or its corresponding type declarations."},
	{"jest: two different tests", false,
		"FAIL src/cart.test.ts\n  ● Cart › applies discount\n\n    Expected: 90\n    Received: 100",
		"FAIL src/user.test.ts\n  ● User › rejects an empty email\n\n    TypeError: Cannot read properties of undefined (reading 'trim')"},
	{"pytest: same assertion, other tmp_path and time", true,
		"_________________________ test_export_csv _________________________\n\ntmp_path = PosixPath('/tmp/pytest-of-ci/pytest-12/test_export_csv0')\n\n    def test_export_csv(tmp_path):\n>       assert export(tmp_path / 'out.csv') == 3\nE       AssertionError: assert 2 == 3\n\ntests/test_export.py:27: AssertionError\n========== 1 failed, 14 passed in 0.84s ==========",
		"_________________________ test_export_csv _________________________\n\ntmp_path = PosixPath('/tmp/pytest-of-ci/pytest-13/test_export_csv0')\n\n    def test_export_csv(tmp_path):\n>       assert export(tmp_path / 'out.csv') == 3\nE       AssertionError: assert 2 == 3\n\ntests/test_export.py:29: AssertionError\n========== 1 failed, 14 passed in 1.02s =========="},
	{"python traceback, other paths and lines", true,
		"Traceback (most recent call last):\n  File \"/home/alice/proj/app/main.py\", line 88, in <module>\n    run()\n  File \"/home/alice/proj/app/db.py\", line 41, in connect\n    conn = psycopg.connect(dsn)\nModuleNotFoundError: No module named 'psycopg'",
		"Traceback (most recent call last):\n  File \"/srv/ci/build-5521/app/main.py\", line 90, in <module>\n    run()\n  File \"/srv/ci/build-5521/app/db.py\", line 44, in connect\n    conn = psycopg.connect(dsn)\nModuleNotFoundError: No module named 'psycopg'"},
	{"python: import error vs key error", false,
		"Traceback (most recent call last):\n  File \"app/db.py\", line 41, in connect\nModuleNotFoundError: No module named 'psycopg'",
		"Traceback (most recent call last):\n  File \"app/settings.py\", line 12, in load\nKeyError: 'DATABASE_URL'"},
	{"pytest: two different assertions", false,
		"tests/test_export.py:27: AssertionError\nE       AssertionError: assert 2 == 3",
		"tests/test_import.py:58: ValueError\nE       ValueError: invalid literal for int() with base 10: 'abc'"},
}

// TestErrorPairs is the fixture table: after Normalize, each same-bug pair
// is at least 0.8 similar (the replan threshold) and each different-bug
// pair is below it; each same-bug pair has one fingerprint, although the
// raw texts differ, and no different-bug pair shares one.
func TestErrorPairs(t *testing.T) {
	const threshold = 0.8
	needNormalize := 0
	langs := map[string]int{}
	for _, p := range errorPairs {
		na, nb := Normalize(p.a), Normalize(p.b)
		r := Ratio(na, nb)
		switch {
		case p.same && r < threshold:
			t.Errorf("%s: same bug, similarity %.3f < %.1f\n a: %q\n b: %q", p.name, r, threshold, na, nb)
		case !p.same && r >= threshold:
			t.Errorf("%s: different bugs, similarity %.3f >= %.1f\n a: %q\n b: %q", p.name, r, threshold, na, nb)
		}
		if p.same {
			if Fingerprint(p.a) != Fingerprint(p.b) {
				t.Errorf("%s: same bug, different fingerprints\n a: %q\n b: %q", p.name, na, nb)
			}
			if Ratio(p.a, p.b) < 1 {
				needNormalize++
			}
		} else if Fingerprint(p.a) == Fingerprint(p.b) {
			t.Errorf("%s: different bugs share a fingerprint", p.name)
		}
		switch {
		case strings.Contains(p.name, "go"):
			langs["go"]++
		case strings.Contains(p.name, "ts") || strings.Contains(p.name, "jest"):
			langs["ts"]++
		default:
			langs["py"]++
		}
	}
	if needNormalize < 6 {
		t.Errorf("only %d same-bug pairs differ before normalizing; the fixture should exercise the normalizer", needNormalize)
	}
	if langs["go"] < 4 || langs["ts"] < 3 || langs["py"] < 3 {
		t.Errorf("fixture coverage by language: %v", langs)
	}
}
