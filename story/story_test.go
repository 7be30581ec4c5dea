package story

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func rec(seq, phase, attempt int, f Facts) Record {
	return Record{Seq: seq, Role: "developer", Phase: phase, Attempt: attempt, Facts: f}
}

func TestNameIsDeterministic(t *testing.T) {
	r := rec(7, 3, 2, Facts{Methods: []string{"A()"}})
	if got, want := r.Name(), "007-developer-p3-a2.json"; got != want {
		t.Fatalf("Name = %q, want %q", got, want)
	}
	r.Methods = []string{"B()"}
	if r.Name() != "007-developer-p3-a2.json" {
		t.Fatal("the name depends on the content")
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	r := rec(1, 1, 1, Facts{Decisions: []Decision{{Topic: "db", What: "use sqlite", Why: "no server"}}, Commands: []string{"NOT TODO: add a cache"}})
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(r) {
		t.Fatalf("round trip: %+v, want %+v", got, r)
	}
	if Hash(b) == "" || len(Hash(b)) != 64 {
		t.Fatalf("hash %q", Hash(b))
	}
	for _, bad := range []string{"", "{", `{"seq":0,"role":"x"}`, `{"seq":1}`} {
		if _, err := Decode([]byte(bad)); !errors.Is(err, ErrBadRecord) {
			t.Errorf("Decode(%q) = %v, want ErrBadRecord", bad, err)
		}
	}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name  string
		recs  []Record
		check func(t *testing.T, m Merged)
	}{
		{"duplicate dependencies keep the first", []Record{
			rec(1, 1, 1, Facts{Dependencies: []string{"firebase-admin"}}),
			rec(2, 2, 1, Facts{Dependencies: []string{"firebase-admin", "google-cloud-tts"}}),
		}, func(t *testing.T, m Merged) {
			if len(m.Dependencies) != 2 || m.Dependencies[0].Phase != 1 {
				t.Errorf("dependencies %+v", m.Dependencies)
			}
		}},
		{"a later decision on the same topic supersedes", []Record{
			rec(1, 1, 1, Facts{Decisions: []Decision{{Topic: "store", What: "use Postgres"}}}),
			rec(2, 3, 1, Facts{Decisions: []Decision{{Topic: "Store", What: "use SQLite"}}}),
		}, func(t *testing.T, m Merged) {
			if len(m.Decisions) != 1 || m.Decisions[0].Item.What != "use SQLite" {
				t.Errorf("decisions %+v", m.Decisions)
			}
		}},
		{"a method's later signature supersedes", []Record{
			rec(1, 1, 1, Facts{Methods: []string{"TTS.Synthesize(text)"}}),
			rec(2, 2, 1, Facts{Methods: []string{"TTS.Synthesize(text, timeout)"}}),
		}, func(t *testing.T, m Merged) {
			if len(m.Methods) != 1 || m.Methods[0].Item != "TTS.Synthesize(text, timeout)" {
				t.Errorf("methods %+v", m.Methods)
			}
		}},
		{"DONE and NOT TODO close a TODO", []Record{
			rec(1, 1, 1, Facts{Commands: []string{"TODO: add retries", "TODO: write docs", "TODO: cache"}}),
			rec(2, 2, 1, Facts{Commands: []string{"DONE: add retries", "NOT TODO: cache"}}),
		}, func(t *testing.T, m Merged) {
			if len(m.Todos) != 1 || m.Todos[0].Item != "TODO: write docs" {
				t.Errorf("todos %+v", m.Todos)
			}
			if len(m.NotTodos) != 1 || m.NotTodos[0].Item != "NOT TODO: cache" {
				t.Errorf("not todos %+v", m.NotTodos)
			}
		}},
		{"records are merged in sequence order", []Record{
			rec(2, 2, 1, Facts{Decisions: []Decision{{Topic: "t", What: "second"}}}),
			rec(1, 1, 1, Facts{Decisions: []Decision{{Topic: "t", What: "first"}}}),
		}, func(t *testing.T, m Merged) {
			if m.Decisions[0].Item.What != "second" {
				t.Errorf("decisions %+v", m.Decisions)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, Merge(tc.recs)) })
	}
}

func bigRecords(n int) []Record {
	var rs []Record
	for i := 1; i <= n; i++ {
		rs = append(rs, rec(i, i, 1, Facts{
			Decisions:       []Decision{{Topic: fmt.Sprintf("topic %d", i), What: fmt.Sprintf("decision %d %s", i, strings.Repeat("word ", 30)), Why: strings.Repeat("because ", 30)}},
			Commands:        []string{fmt.Sprintf("TODO: task %d %s", i, strings.Repeat("x ", 20)), fmt.Sprintf("NOT TODO: forbidden%d", i)},
			Methods:         []string{fmt.Sprintf("Service%d.Do(x int) error", i)},
			Dependencies:    []string{fmt.Sprintf("dep-%d", i)},
			Recommendations: []string{strings.Repeat("recommend ", 40)},
		}))
	}
	return rs
}

func TestLevelsFitTheirBudgetsAndKeepVerbatimItems(t *testing.T) {
	tests := []struct {
		name   string
		level  func([]Record, int) (string, error)
		budget int
		recs   []Record
	}{
		{"level 1, small", Level1, 0, bigRecords(2)},
		{"level 1, large", Level1, 0, bigRecords(40)},
		{"level 2, small", Level2, 0, bigRecords(2)},
		{"level 2, large", Level2, 0, bigRecords(25)},
		{"level 2, tight", Level2, 400, bigRecords(5)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, err := tc.level(tc.recs, tc.budget)
			if err != nil {
				t.Fatal(err)
			}
			b := tc.budget
			if b == 0 {
				b = Level1Budget
				if strings.Contains(text, "Story so far") {
					b = Level2Budget
				}
			}
			if Tokens(text) > b {
				t.Fatalf("%d tokens over budget %d", Tokens(text), b)
			}
			for _, v := range Merge(tc.recs).Verbatim() {
				if !strings.Contains(text, v) {
					t.Errorf("lost %q", v)
				}
			}
			if err := CheckSummary(text, tc.recs, b); err != nil {
				t.Errorf("the deterministic text fails its own check: %v", err)
			}
		})
	}
}

// Level 2 keeps what an agent stated — a decision's reason (where a
// rejected alternative lives), a recommendation, a name given only in a
// session's summary — while the budget allows, and sheds the least
// important first, one item at a time, only under pressure.
func TestLevel2KeepsReasonsWhileTheBudgetAllows(t *testing.T) {
	rs := []Record{
		{Seq: 1, Role: "developer", Phase: 1, Summary: "Added the X-Request-ID header to every response.",
			Facts: Facts{Decisions: []Decision{{Topic: "queue", What: "use Redis streams", Why: "Kafka was rejected because the team cannot run it"}}}},
		{Seq: 2, Role: "developer", Phase: 2, Facts: Facts{Recommendations: []string{"keep concurrency at 4"}, Commands: []string{"TODO: add retries"}}},
		{Seq: 3, Role: "developer", Phase: 3, Summary: "Wrote the importer.", Facts: Facts{Decisions: []Decision{{What: "batch size is 500", Why: "the API caps pages at 500"}}}},
	}
	text, err := Level2(rs, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"X-Request-ID", "Kafka was rejected because the team cannot run it", "keep concurrency at 4", "TODO: add retries", "the API caps pages at 500"} {
		if !strings.Contains(text, want) {
			t.Errorf("level 2 lost %q, with room to spare:\n%s", want, text)
		}
	}
	// Under pressure: the session summaries go first, then the TODOs,
	// then recommendations, then the oldest reasons; decisions last.
	prev := Tokens(text)
	var shed []string
	for b := prev - 1; b > 25; b-- {
		got, _ := Level2(rs, b)
		if Tokens(got) > b {
			break
		}
		for _, w := range []string{"X-Request-ID", "Wrote the importer", "TODO: add retries", "keep concurrency at 4", "Kafka was rejected", "the API caps pages", "use Redis streams"} {
			if !strings.Contains(got, w) && !slices.Contains(shed, w) {
				shed = append(shed, w)
			}
		}
	}
	want := []string{"X-Request-ID", "Wrote the importer", "TODO: add retries", "keep concurrency at 4", "Kafka was rejected", "the API caps pages"}
	if !slices.Equal(shed, want) {
		t.Errorf("shed in the order %q, want %q", shed, want)
	}
	rs[0].Summary = "wrote the service"
	l1, _ := Level1(rs[:1], 0)
	if !strings.Contains(l1, "Kafka was rejected") || !strings.Contains(l1, "attempt 0, iteration 0: wrote the service") {
		t.Fatalf("level 1 lost detail that fits:\n%s", l1)
	}
}

func TestOverBudgetWhenVerbatimItemsDoNotFit(t *testing.T) {
	if _, err := Level2(bigRecords(30), 50); !errors.Is(err, ErrOverBudget) {
		t.Fatalf("err = %v, want ErrOverBudget", err)
	}
	// Past the budget the text stays within it: the oldest methods go
	// (counted, and pointed at the story/ files), requirements and NOT
	// TODOs stay. A story can thus not outgrow its budget however many
	// phases feed it.
	rs := bigRecords(100)
	rs[0].Requirements = []string{"The user's requirement stays."}
	text, err := Level2(rs, 0)
	if !errors.Is(err, ErrOverBudget) || Tokens(text) > Level2Budget {
		t.Fatalf("%d tokens, err %v; want at most %d and ErrOverBudget", Tokens(text), err, Level2Budget)
	}
	m := Merge(rs)
	for _, v := range append(m.Verbatim()[:1], m.Verbatim()[len(m.Verbatim())-100:]...) {
		if !strings.Contains(text, v) {
			t.Errorf("lost %q, a requirement or NOT TODO", v)
		}
	}
	if strings.Contains(text, "Service1.Do(x int) error") || !strings.Contains(text, "Service100.Do(x int) error") || !strings.Contains(text, "older left out; see the story/ files") {
		t.Errorf("the oldest methods should go first, with a pointer:\n%s", text)
	}
	if s, err := Level1(nil, 0); s != "" || err != nil {
		t.Fatalf("empty: %q, %v", s, err)
	}
}

func TestCheckSummary(t *testing.T) {
	rs := []Record{rec(1, 1, 1, Facts{
		Decisions:    []Decision{{What: "Use FCM for push notifications", Why: "a custom service is not needed"}},
		Methods:      []string{"FCM.Send(token, payload)"},
		Dependencies: []string{"firebase-admin"},
		Commands:     []string{"NOT TODO: build a custom notification service"},
	})}
	good := "## Story so far\n- firebase-admin\n- FCM.Send(token, payload)\n- NOT TODO: build a custom notification service\n- Use FCM for push\n"
	tests := []struct {
		name    string
		summary string
		budget  int
		want    string // "" for accepted, else part of the error
	}{
		{"accepted", good, 1500, ""},
		{"over budget", good, 10, "budget"},
		{"lost a method", strings.Replace(good, "FCM.Send(token, payload)", "FCM.Send", 1), 1500, "lost"},
		{"invented a dependency", good + "- redis\n", 1500, `"redis"`},
		{"invented a method", good + "- FCM.Broadcast()\n", 1500, "fcm.broadcast"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSummary(tc.summary, rs, tc.budget)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrRejectedSummary) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrRejectedSummary with %q", err, tc.want)
			}
		})
	}
}

func TestTokensAndRetention(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{{"", 0}, {"a", 1}, {"abcd", 1}, {"abcde", 2}, {"é", 1}} {
		if got := Tokens(tc.in); got != tc.want {
			t.Errorf("Tokens(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
	kept, share := Retention("uses  firebase-admin\nand TTS.Say(x)", []string{"firebase-admin", "TTS.Say(x)", "redis"})
	if len(kept) != 2 || share != 2.0/3 {
		t.Fatalf("kept %v share %v", kept, share)
	}
	if _, s := Retention("", nil); s != 1 {
		t.Fatalf("no facts: %v", s)
	}
	if inv := Invented("a redis b", "a b", []string{"redis", "a"}); len(inv) != 1 || inv[0] != "redis" {
		t.Fatalf("invented %v", inv)
	}
}

// TestStoryLevelsSayNothingTwice: in a retry's prompt the story so far
// leaves out what the phase's own records supersede or restate, and Level 1
// leaves out what the story so far shows; Level2Without of no records of
// the phase is Level2.
func TestStoryLevelsSayNothingTwice(t *testing.T) {
	before := []Record{
		rec(1, 1, 1, Facts{Decisions: []Decision{{Topic: "sessions", What: "sessions are signed JWTs"}, {Topic: "db", What: "users live in Postgres"}},
			Methods: []string{"Sessions.Issue(user UserID) (Token, error)", "Users.Create(email string) error"}, Dependencies: []string{"pgx"},
			Commands: []string{"TODO: rotate keys", "NOT TODO: write our own crypto"}}),
	}
	this := []Record{
		rec(2, 2, 1, Facts{Decisions: []Decision{{Topic: "sessions", What: "sessions are opaque random tokens", Why: "JWTs cannot be revoked"}},
			Methods: []string{"Sessions.Issue(ctx context.Context, user UserID) (Token, error)"}, Dependencies: []string{"pgx", "argon2"},
			Commands: []string{"DONE: rotate keys", "NOT TODO: write our own crypto", "NOT TODO: log tokens"}}),
	}
	l2, err := Level2Without(before, this, 0)
	if err != nil {
		t.Fatal(err)
	}
	l1, err := Level1Without(this, l2, 0)
	if err != nil {
		t.Fatal(err)
	}
	both := l2 + l1
	for _, gone := range []string{"signed JWTs", "Sessions.Issue(user UserID)", "TODO: rotate keys"} {
		if strings.Contains(both, gone) {
			t.Errorf("the prompt keeps %q, which this phase superseded:\n%s", gone, both)
		}
	}
	for _, once := range []string{"- pgx\n", "- NOT TODO: write our own crypto\n", "users live in Postgres", "Users.Create(email string) error",
		"sessions are opaque random tokens (why: JWTs cannot be revoked)", "Sessions.Issue(ctx context.Context, user UserID) (Token, error)", "- argon2\n", "NOT TODO: log tokens"} {
		if n := strings.Count(both, once); n != 1 {
			t.Errorf("%q said %d times, want once:\n%s", once, n, both)
		}
	}
	plain, _ := Level2(before, 0)
	if got, _ := Level2Without(before, nil, 0); got != plain {
		t.Errorf("Level2Without(before, nil) = %q, want Level2's %q", got, plain)
	}
	if got, _ := Level1Without(this, "", 0); got != func() string { s, _ := Level1(this, 0); return s }() {
		t.Errorf("Level1Without(this, \"\") differs from Level1:\n%s", got)
	}
}

// A record's file carries '<', '>' and '&' as written: agents read it.
func TestEncodeKeepsBracketsRaw(t *testing.T) {
	r := rec(1, 1, 1, Facts{Decisions: []Decision{{What: "plugins live under plugins/<name>/<version>", Why: "a & b -> c"}}})
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "plugins/<name>/<version>") || !strings.Contains(string(b), "a & b -> c") || strings.Contains(string(b), `\u00`) {
		t.Fatalf("encoded record escapes brackets:\n%s", b)
	}
	// Records written before keep decoding: \u003c is still '<'.
	old := []byte(`{"seq": 1, "role": "developer", "phase": 1, "decisions": [{"what": "plugins/\u003cname\u003e"}]}`)
	got, err := Decode(old)
	if err != nil || got.Decisions[0].What != "plugins/<name>" {
		t.Fatalf("Decode of an escaped record: %+v, %v", got, err)
	}
}
