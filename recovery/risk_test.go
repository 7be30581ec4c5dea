package recovery

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/state"
)

// TestChooseTierByRiskCategory is seed 003's Doctor table: the latest
// failure's category picks the tier, high-risk the strong model while
// its budget lasts, low-risk the cheap one whatever the history, any
// other by the phase's history as before.
func TestChooseTierByRiskCategory(t *testing.T) {
	gaveUp := Input{AgentFailed: true, AgentError: "I could not finish"}
	build := Input{AgentFailed: true, TestOutput: "./a.go:1:1: undefined: X"}
	edit := Input{Driver: DriverTool, DriverError: "edit: old text not found"}
	infra := Input{Driver: DriverServer, DriverError: "HTTP 502"}
	custom := Input{AgentFailed: true, AgentError: "SCHEMA DRIFT in calc.proto"}
	drift := []FatalRule{{Name: "schema_drift", Pattern: "SCHEMA DRIFT"}}
	fail := func(cfg Config, ins ...Input) Memory {
		var m Memory
		for i, in := range ins {
			m, _ = RecordFailure(m, 0, i+1, in, cfg)
		}
		return m
	}
	tests := []struct {
		name   string
		cfg    Config
		ins    []Input
		strong int // strong calls already spent
		want   Tier
	}{
		{"test failure is high-risk", Config{}, []Input{testFail, testFail}, 0, TierStrong},
		{"build error is high-risk", Config{}, []Input{build, build}, 0, TierStrong},
		{"tool error is high-risk", Config{}, []Input{edit, edit}, 0, TierStrong},
		{"high-risk without strong budget", Config{}, []Input{testFail, testFail}, 5, TierCheap},
		{"infra is low-risk", Config{}, []Input{infra}, 0, TierCheap},
		{"low-risk stays cheap when complex", Config{}, []Input{testFail, gaveUp, testFail, infra}, 0, TierCheap},
		{"other category, simple", Config{}, []Input{gaveUp, gaveUp}, 0, TierCheap},
		{"other category, complex", Config{}, []Input{gaveUp, gaveUp, gaveUp, gaveUp}, 0, TierStrong},
		{"high list emptied", Config{HighRisk: []Category{}}, []Input{testFail, testFail}, 0, TierCheap},
		{"low list emptied: infra by history", Config{LowRisk: []Category{}}, []Input{testFail, infra}, 0, TierStrong},
		{"configured high", Config{HighRisk: []Category{CatGaveUp}}, []Input{gaveUp, gaveUp}, 0, TierStrong},
		{"configured low", Config{LowRisk: []Category{CatTestFailure}, HighRisk: []Category{}}, []Input{gaveUp, testFail, testFail, testFail}, 0, TierCheap},
		{"fatal rule category high", Config{Fatal: drift, HighRisk: []Category{"schema_drift"}}, []Input{custom}, 0, TierStrong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mustConfig(t, tt.cfg)
			m := fail(cfg, tt.ins...)
			m.DoctorStrong = tt.strong
			if got := ChooseTier(m, 0, cfg); got != tt.want {
				t.Errorf("ChooseTier = %s, want %s (failures %v)", got, tt.want, m.Phase(0).Categories)
			}
		})
	}
}

func TestRiskCategoriesDefaultsAndValidation(t *testing.T) {
	cfg := mustConfig(t, Config{})
	if !slicesEq(cfg.HighRisk, DefaultHighRisk()) || !slicesEq(cfg.LowRisk, DefaultLowRisk()) || !slicesEq(cfg.FatalTypes, DefaultFatalTypes()) {
		t.Fatalf("defaults: high %v low %v fatal %v", cfg.HighRisk, cfg.LowRisk, cfg.FatalTypes)
	}
	bad := []struct {
		cfg  Config
		want string
	}{
		{Config{HighRisk: []Category{"logic"}}, `high_risk_categories: "logic" is no failure category`},
		{Config{LowRisk: []Category{"infra", "infra"}}, `low_risk_categories: "infra" is listed twice`},
		{Config{HighRisk: []Category{"infra"}}, `"infra" is in both`},
		{Config{FatalTypes: []Category{"test_failure"}}, `fatal_error_types: "test_failure" is a built-in category`},
		{Config{FatalTypes: []Category{"Wrong Stack"}}, `fatal_error_types: "Wrong Stack": want a snake_case name`},
	}
	for _, b := range bad {
		_, err := b.cfg.Validate()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: err %v, want %q", b.cfg, err, b.want)
		}
	}
	// A fatal error type may be a risk category: it is a category.
	if _, err := (Config{FatalTypes: []Category{"wrong_db"}, HighRisk: []Category{"wrong_db"}}).Validate(); err != nil {
		t.Errorf("a fatal error type as high-risk: %v", err)
	}
}

// TestWithRulesLaysTheProfileOver: what a profile sets replaces the
// default, an empty list included; what it leaves out keeps it.
func TestWithRulesLaysTheProfileOver(t *testing.T) {
	off, none := false, []string{}
	high := []string{"agent_gave_up"}
	cfg := mustConfig(t, Config{}.WithRules(state.RecoveryRules{HighRiskCategories: &high, FatalErrorTypes: &none, MessageSimilarityEnabled: &off}))
	if !slicesEq(cfg.HighRisk, []Category{CatGaveUp}) || !slicesEq(cfg.LowRisk, DefaultLowRisk()) || len(cfg.FatalTypes) != 0 || !cfg.NoMessageSimilarity {
		t.Fatalf("config %+v", cfg)
	}
	if cfg.IsFatalType("wrong_tech_stack") {
		t.Error("fatal_error_types: [] kept a default type")
	}
	d := DefaultRules()
	back := mustConfig(t, Config{}.WithRules(d))
	if !slicesEq(back.HighRisk, DefaultHighRisk()) || !slicesEq(back.FatalTypes, DefaultFatalTypes()) || back.NoMessageSimilarity {
		t.Fatalf("DefaultRules round trip: %+v", back)
	}
}

func slicesEq(a, b []Category) bool { return slices.Equal(a, b) }
