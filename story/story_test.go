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
		level  func([]Record, Need, int) (string, error)
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
			text, err := tc.level(tc.recs, Need{}, tc.budget)
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
	text, err := Level2(rs, Need{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"X-Request-ID", "Kafka was rejected because the team cannot run it", "keep concurrency at 4", "TODO: add retries", "the API caps pages at 500"} {
		if !strings.Contains(text, want) {
			t.Errorf("level 2 lost %q, with room to spare:\n%s", want, text)
		}
	}
	// Under pressure the least needed go first, whatever their kind:
	// the decision whose reason states a limit ("caps") outlasts the
	// rest, a name given in passing outlasts routine narration.
	prev := Tokens(text)
	var shed []string
	for b := prev - 1; b > 25; b-- {
		got, _ := Level2(rs, Need{}, b)
		if Tokens(got) > b {
			break
		}
		for _, w := range []string{"X-Request-ID", "Wrote the importer", "TODO: add retries", "keep concurrency at 4", "Kafka was rejected", "the API caps pages", "use Redis streams"} {
			if !strings.Contains(got, w) && !slices.Contains(shed, w) {
				shed = append(shed, w)
			}
		}
	}
	if i, j := slices.Index(shed, "Wrote the importer"), slices.Index(shed, "X-Request-ID"); i < 0 || j >= 0 && j < i {
		t.Errorf("shed in the order %q: want routine narration before a name given in passing", shed)
	}
	if i := slices.Index(shed, "the API caps pages"); i >= 0 && i != len(shed)-1 {
		t.Errorf("shed in the order %q: want the stated limit last", shed)
	}
	rs[0].Summary = "wrote the service"
	l1, _ := Level1(rs[:1], Need{}, 0)
	if !strings.Contains(l1, "Kafka was rejected") || !strings.Contains(l1, "attempt 0, iteration 0: wrote the service") {
		t.Fatalf("level 1 lost detail that fits:\n%s", l1)
	}
}

func TestOverBudgetWhenVerbatimItemsDoNotFit(t *testing.T) {
	if _, err := Level2(bigRecords(30), Need{}, 50); !errors.Is(err, ErrOverBudget) {
		t.Fatalf("err = %v, want ErrOverBudget", err)
	}
	// Past the budget the text stays within it: the oldest methods go
	// (counted, and pointed at the story/ files), requirements and NOT
	// TODOs stay. A story can thus not outgrow its budget however many
	// phases feed it.
	rs := bigRecords(100)
	rs[0].Requirements = []string{"The user's requirement stays."}
	text, err := Level2(rs, Need{}, 0)
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
	if s, err := Level1(nil, Need{}, 0); s != "" || err != nil {
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
	l2, err := Level2Without(before, this, Need{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	l1, err := Level1Without(this, l2, Need{}, 0)
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
	plain, _ := Level2(before, Need{}, 0)
	if got, _ := Level2Without(before, nil, Need{}, 0); got != plain {
		t.Errorf("Level2Without(before, nil) = %q, want Level2's %q", got, plain)
	}
	if got, _ := Level1Without(this, "", Need{}, 0); got != func() string { s, _ := Level1(this, Need{}, 0); return s }() {
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

// shedRecords is a story with facts and routine notes of every kind:
// the facts are a constraint or something a later task names, the notes
// are as long and as many.
func shedRecords() []Record {
	return []Record{
		{Seq: 1, Role: "developer", Phase: 1, Summary: "Read the old wiki pages about the service and the notes of the previous team, which were long. " +
			"The maintenance window is Sunday 02:00 to 04:00 UTC, and nothing may restart outside it. " +
			"Spent a while tidying the imports and reformatting the comments of the handler package so they read better.",
			Facts: Facts{
				Decisions: []Decision{
					{Topic: "style", What: "group the helper functions of the package by what they do rather than alphabetically", Why: "it reads better that way in review"},
					{Topic: "index", What: "the search index is named orders_by_customer_v2", Why: "the first version had the wrong analyzer"},
				},
				Recommendations: []string{"page the on-call through alerting when replication lag stays high for a while",
					"consider moving the contributing notes into the wiki some day, where people might read them more"},
			}},
		{Seq: 2, Role: "developer", Phase: 2, Summary: "Wired the exporter to the metrics endpoint at metrics.internal:9464. Renamed a few local variables for clarity and ran the linters twice.",
			Facts: Facts{Commands: []string{"TODO: look at the flaky formatting check again when there is a quiet afternoon"},
				Recommendations: []string{"the team liked the new log format, it may be worth using it in the other services too"}}},
		{Seq: 3, Role: RoleReviewer, Phase: 2, Attempt: 1, Iteration: 1, Summary: "rejected: The retry loop hammers the API. Use exponential backoff capped at 30 s instead. The variable names are fine."},
	}
}

// Shedding goes by need, not kind: under pressure every routine note goes
// before any fact — a window stated once in a summary, a host and port,
// an index name, a recommendation about alerting that a later task
// needs, a reviewer's limit — whatever kind of record holds it.
func TestLevel2ShedsByNeedNotKind(t *testing.T) {
	rs := shedRecords()
	need := Need{Goal: "replicated orders", Phases: []string{"", "", "", "", "", "", "", "", "set up alerting on replication lag\nAlerts go to the on-call."}}
	facts := []string{"The maintenance window is Sunday 02:00 to 04:00 UTC, and nothing may restart outside it.", "metrics.internal:9464",
		"the search index is named orders_by_customer_v2", "page the on-call through alerting when replication lag stays high for a while",
		"Use exponential backoff capped at 30 s instead."}
	notes := []string{"Read the old wiki pages", "Spent a while tidying the imports", "group the helper functions", "consider moving the contributing notes",
		"Renamed a few local variables", "TODO: look at the flaky formatting check", "the team liked the new log format", "The variable names are fine."}
	full, err := Level2(rs, need, 0)
	if err != nil {
		t.Fatal(err)
	}
	if kept, _ := Retention(full, append(slices.Clone(facts), notes...)); len(kept) != len(facts)+len(notes) {
		t.Fatalf("with room to spare the story keeps only %q:\n%s", kept, full)
	}
	lostFact := false
	for b := Tokens(full) - 1; b > 60; b -= 3 {
		got, err := Level2(rs, need, b)
		if err != nil || Tokens(got) > b {
			break
		}
		keptFacts, _ := Retention(got, facts)
		keptNotes, _ := Retention(got, notes)
		if len(keptFacts) < len(facts) {
			lostFact = true
			if len(keptNotes) > 0 {
				t.Fatalf("at %d tokens a fact went while the notes %q stayed:\n%s", b, keptNotes, got)
			}
		}
		if !strings.Contains(got, "items left out: see the story") {
			t.Fatalf("at %d tokens the story does not say it left things out:\n%s", b, got)
		}
	}
	if !lostFact {
		t.Fatal("the budget never got tight enough to lose a fact: the test proves nothing")
	}
}

// The need is what tells a fact from a note when neither states a
// constraint or a name: the alerting recommendation outlasts the wiki
// one only when a later task is about alerting.
func TestNeedNamesWhatALaterTaskNeeds(t *testing.T) {
	rs := []Record{{Seq: 1, Role: "developer", Phase: 1, Facts: Facts{Recommendations: []string{
		"page the on-call through alerting when replication lag stays high",
		"move the contributing notes into the wiki where people read them more"}}}}
	full, _ := Level2(rs, Need{}, 0)
	b := Tokens(full) - 3
	plain, _ := Level2(rs, Need{}, b)
	needed, _ := Level2(rs, Need{Phases: []string{"", "", "", "alerting for replication lag"}}, b)
	if !strings.Contains(needed, "alerting") || strings.Contains(needed, "contributing notes") {
		t.Errorf("with a later task about alerting, the alerting recommendation should stay:\n%s", needed)
	}
	if strings.Contains(plain, "alerting") {
		t.Errorf("with no need the oldest-first tie keeps the later note, not the alerting one:\n%s", plain)
	}
}

func TestSupersedesRequirement(t *testing.T) {
	for _, tc := range []struct {
		newer, older string
		want         bool
	}{
		{"Keep audit logs for 30 days.", "Keep audit logs for 14 days.", true},
		{"Audit logs must now be kept for 30 days instead of 14.", "Audit logs must be kept for 14 days.", true},
		{"Reads must finish in under 5 ms at p99.", "Reads must finish in under 5 ms.", true},
		{"Every write must finish in under 20 ms.", "Every read must finish in under 5 ms.", false},
		{"Keep audit logs for 14 days.", "Keep audit logs for 14 days.", false},
		{"Exports run nightly at 02:00 UTC.", "Keep audit logs for 14 days.", false},
		{"Keep audit logs.", "Keep audit logs for 14 days.", false},
		{"Allow 100 requests per second for admins.", "Allow 10 requests per second.", false},
		{"Retries are raised to 8 attempts instead of 5.", "Retries stop after 5 attempts.", false},
		{"Retries stop after 8 attempts.", "Retries stop after 5 attempts.", true},
	} {
		if got := SupersedesRequirement(tc.newer, tc.older); got != tc.want {
			t.Errorf("SupersedesRequirement(%q, %q) = %v, want %v", tc.newer, tc.older, got, tc.want)
		}
	}
}

// A requirement changed mid-run and a method renamed mid-run leave the
// story: the old requirement, and a sentence that restates it, are gone;
// the old name is gone from the methods and every other item says the
// new one.
func TestSupersededItemsLeaveTheStory(t *testing.T) {
	rs := []Record{
		{Seq: 1, Role: "developer", Phase: 1, Summary: "Set up the audit table. The user wants audit logs kept for 14 days.",
			Facts: Facts{Requirements: []string{"Keep audit logs for 14 days.", "Every read must finish in under 5 ms."},
				Methods:         []string{"Client.FetchAll(ctx context.Context) ([]Item, error)"},
				Recommendations: []string{"call Client.FetchAll with a page size of 100"}}},
		{Seq: 2, Role: "developer", Phase: 2, Summary: "Renamed Client.FetchAll to Client.ListItems to match the API's verbs.",
			Facts: Facts{Requirements: []string{"Keep audit logs for 30 days."},
				Methods:   []string{"Client.ListItems(ctx context.Context) ([]Item, error)"},
				Decisions: []Decision{{What: "FetchAll → ListItems", Why: "the REST API calls it list"}}}},
	}
	m := Merge(rs)
	var reqs, methods []string
	for _, r := range m.Requirements {
		reqs = append(reqs, r.Item)
	}
	for _, r := range m.Methods {
		methods = append(methods, r.Item)
	}
	if !slices.Equal(reqs, []string{"Every read must finish in under 5 ms.", "Keep audit logs for 30 days."}) {
		t.Errorf("requirements %q", reqs)
	}
	if !slices.Equal(methods, []string{"Client.ListItems(ctx context.Context) ([]Item, error)"}) {
		t.Errorf("methods %q", methods)
	}
	for _, level := range []func([]Record, Need, int) (string, error){Level1, Level2} {
		text, err := level(rs, Need{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, gone := range []string{"14 days", "FetchAll"} {
			if strings.Contains(text, gone) {
				t.Errorf("the story keeps the superseded %q:\n%s", gone, text)
			}
		}
		for _, kept := range []string{"call Client.ListItems with a page size of 100", "Keep audit logs for 30 days.", "Set up the audit table."} {
			if !strings.Contains(text, kept) {
				t.Errorf("the story lost %q:\n%s", kept, text)
			}
		}
	}
	// A rename a record only recommends is no rename; nor is one of a
	// name the story has no method of.
	rs[1].Summary, rs[1].Decisions = "", nil
	rs[1].Methods = []string{"Client.ListItems(ctx context.Context) ([]Item, error)"}
	rs[1].Recommendations = []string{"rename Client.FetchAll to Client.ListItems later"}
	if m := Merge(rs); len(m.Methods) != 2 {
		t.Errorf("a recommended rename dropped a method: %+v", m.Methods)
	}
}

// A method whose bare name is an English word ("Run") is renamed where
// it is the method (Worker.Run, Run()), not where it is the word.
func TestRenameLeavesOrdinaryWordsAlone(t *testing.T) {
	rs := []Record{
		{Seq: 1, Role: "developer", Phase: 1, Summary: "Run the tests with -race. Worker.Run drains the queue; Run() returns on cancel.",
			Facts: Facts{Methods: []string{"Worker.Run(ctx context.Context) error"}}},
		{Seq: 2, Role: "developer", Phase: 2, Summary: "Renamed Worker.Run to Worker.Start.",
			Facts: Facts{Methods: []string{"Worker.Start(ctx context.Context) error"}}},
	}
	text, err := Level2(rs, Need{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Run the tests with -race.", "Worker.Start drains the queue; Start() returns on cancel.", "Named Worker.Start."} {
		if !strings.Contains(text, want) {
			t.Errorf("the story lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Worker.Run") || strings.Contains(text, "Start the tests") {
		t.Errorf("the rename went wrong:\n%s", text)
	}
}

func TestConstraint(t *testing.T) {
	for text, want := range map[string]bool{
		"nothing may restart outside the maintenance window": true, "never log the payload": true, "Merchants must use https.": true,
		"limit each merchant to 50 deliveries": true, "the admin API listens on port 8443": true, "at most 8 attempts": true,
		"keep the timeout at 2 s": true, "replies within 500 ms": true, "kept for 30 days": true, "archives up to 2 GiB": true,
		"past 80% of its quota": true, "starts at 02:00": true, "answers at db.internal:5433": true, "runs on Sundays": true,
		"Tidied the imports and ran the suite three times.": false, "It is important to support the capital letters.": false,
		"Wrote the handler tests first, then 3 helpers.": false, "Asked the support team which actions they use most.": false,
	} {
		if got := Constraint(text); got != want {
			t.Errorf("Constraint(%q) = %v, want %v", text, got, want)
		}
	}
}
