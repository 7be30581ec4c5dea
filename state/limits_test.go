package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint/badger"
)

// tasksPlan returns a plan of n tasks, each with a body of body bytes.
func tasksPlan(n, body int) string {
	var b strings.Builder
	b.WriteString("# Many tasks\n\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "### Task %d: step %d\n\n%s\n\n", i, i, strings.Repeat("x", body))
	}
	return b.String()
}

func TestPlanLimits(t *testing.T) {
	for _, tc := range []struct {
		name, md string
		want     string // the one problem; "" for a valid plan
	}{
		{"at the task limit", tasksPlan(MaxTasks, 10), ""},
		{"over the task limit", tasksPlan(MaxTasks+1, 10),
			fmt.Sprintf("p.md: the plan has %d tasks, over the limit of %d; split it into smaller plans", MaxTasks+1, MaxTasks)},
		{"over the size limit", tasksPlan(2, MaxPlanBytes/2),
			fmt.Sprintf("p.md: the plan is %d bytes, over the limit of %d (1 MiB); split it into smaller plans", len(tasksPlan(2, MaxPlanBytes/2)), MaxPlanBytes)},
		{"a task over its limit", tasksPlan(1, MaxTaskBytes) + "### Task 2: small\n",
			fmt.Sprintf("p.md:3: task 1 is %d bytes, over the limit of %d (64 KiB); split it into smaller tasks", MaxTaskBytes+21, MaxTaskBytes)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePlan("p.md", tc.md)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("ParsePlan: %v", err)
				}
				return
			}
			var pe *PlanError
			if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidPlan) || len(pe.Problems) != 1 {
				t.Fatalf("ParsePlan = %v, want one problem", err)
			}
			if err.Error() != tc.want {
				t.Fatalf("got  %s\nwant %s", err, tc.want)
			}
		})
	}
}

// TestPlanAtTheLimitsFitsACheckpoint holds the limits to their purpose: a
// plan just within them whose every byte JSON must escape still encodes to
// a value the Badger store takes.
func TestPlanAtTheLimitsFitsACheckpoint(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tasks int
	}{{"few big tasks", 17}, {"many small tasks", MaxTasks}} {
		t.Run(tc.name, func(t *testing.T) {
			head := func(i int) string { return fmt.Sprintf("### Task %d: <%d>\n", i, i) }
			per := MaxPlanBytes/tc.tasks - len(head(tc.tasks)) - 2
			per = min(per, MaxTaskBytes-len(head(tc.tasks))-2)
			var b strings.Builder
			for i := 1; i <= tc.tasks; i++ {
				b.WriteString(head(i))
				b.WriteString(strings.Repeat("<", per))
				b.WriteString("\n\n")
			}
			md := b.String()
			if len(md) > MaxPlanBytes || len(md) < MaxPlanBytes*9/10 {
				t.Fatalf("test plan is %d bytes, want just under %d", len(md), MaxPlanBytes)
			}
			plan, err := ParsePlan("p.md", md)
			if err != nil {
				t.Fatalf("ParsePlan: %v", err)
			}
			v, err := json.Marshal(plan)
			if err != nil {
				t.Fatal(err)
			}
			if len(v) > badger.MaxValueSize {
				t.Fatalf("plan encodes to %d bytes, over badger.MaxValueSize %d", len(v), badger.MaxValueSize)
			}
			t.Logf("%d-byte plan encodes to %d bytes (limit %d)", len(md), len(v), badger.MaxValueSize)
		})
	}
}
