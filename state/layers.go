package state

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

func newProblem(line int, ids []string, format string, args ...any) Problem {
	return Problem{Line: line, TaskIDs: ids, Msg: fmt.Sprintf(format, args...)}
}

func sortProblems(ps []Problem) {
	slices.SortStableFunc(ps, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
}

// checkPlan returns the plan's structural problems: no tasks, duplicate
// ids, unknown dependencies, cycles and, when tdd is set, impl tasks with
// no test task in their dependency chain.
func checkPlan(plan Plan, meta []taskMeta, tdd bool) []Problem {
	tasks := plan.Tasks
	if len(tasks) == 0 {
		return []Problem{newProblem(0, nil, `the plan has no tasks: each task needs a "### Task <id>: <title>" heading`)}
	}
	var ps []Problem
	first := make(map[string]int, len(tasks)) // id → index of its first task
	for i, t := range tasks {
		if j, dup := first[t.ID]; dup {
			ps = append(ps, newProblem(t.Line, []string{t.ID}, "duplicate task id %s (first used on line %d)", t.ID, tasks[j].Line))
			continue
		}
		first[t.ID] = i
	}
	for i, t := range tasks {
		for _, d := range t.DependsOn {
			if _, ok := first[d]; !ok {
				line := t.Line
				if i < len(meta) && meta[i].dependsLine > 0 {
					line = meta[i].dependsLine
				}
				ps = append(ps, newProblem(line, []string{t.ID, d}, "task %s depends on unknown task %s", t.ID, d))
			}
		}
	}
	g := newDepGraph(tasks, first)
	for _, cyc := range g.cycles() {
		ids := make([]string, len(cyc))
		for k, n := range cyc {
			ids[k] = tasks[n].ID
		}
		ps = append(ps, newProblem(tasks[cyc[0]].Line, ids, "dependency cycle: %s → %s", strings.Join(ids, " → "), ids[0]))
	}
	if tdd {
		for i, t := range tasks {
			if t.Type == TypeImpl && first[t.ID] == i && !g.reachesTest(i) {
				ps = append(ps, newProblem(t.Line, []string{t.ID},
					"task %s is an impl task with no test task in its dependency chain (write the tests first, or turn the TDD check off)", t.ID))
			}
		}
	}
	return ps
}

// depGraph is the plan's dependencies by task index, with duplicate
// tasks and unknown dependencies left out.
type depGraph struct {
	tasks []Task
	deps  [][]int // deps[i]: indexes of the tasks i depends on, in natural id order
}

func newDepGraph(tasks []Task, first map[string]int) depGraph {
	g := depGraph{tasks: tasks, deps: make([][]int, len(tasks))}
	for i, t := range tasks {
		if first[t.ID] != i {
			continue
		}
		for _, d := range t.DependsOn {
			if j, ok := first[d]; ok && !slices.Contains(g.deps[i], j) {
				g.deps[i] = append(g.deps[i], j)
			}
		}
		slices.SortFunc(g.deps[i], func(a, b int) int { return CompareIDs(tasks[a].ID, tasks[b].ID) })
	}
	return g
}

// cycles returns one cycle (as task indexes, without repeating the first)
// for each strongly connected component that has one, starting at the
// component's first task in document order.
func (g depGraph) cycles() [][]int {
	n := len(g.deps)
	index, low := make([]int, n), make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var comps [][]int
	next := 0
	// Tarjan's algorithm, iteratively, so a long chain cannot exhaust the stack.
	type frame struct{ v, e int }
	for root := range n {
		if index[root] >= 0 {
			continue
		}
		call := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.e < len(g.deps[f.v]) {
				w := g.deps[f.v][f.e]
				f.e++
				switch {
				case index[w] < 0:
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, 0})
				case onStack[w]:
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			var comp []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			if len(comp) > 1 || slices.Contains(g.deps[v], v) {
				comps = append(comps, comp)
			}
		}
	}
	var out [][]int
	for _, comp := range comps {
		out = append(out, g.cycleIn(comp))
	}
	slices.SortFunc(out, func(a, b []int) int { return cmp.Compare(a[0], b[0]) })
	return out
}

// cycleIn returns a shortest cycle through the component's first task,
// found breadth first within the component.
func (g depGraph) cycleIn(comp []int) []int {
	in := make(map[int]bool, len(comp))
	for _, v := range comp {
		in[v] = true
	}
	start := slices.Min(comp)
	prev := map[int]int{}
	queue := []int{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range g.deps[v] {
			if !in[w] {
				continue
			}
			if w == start {
				path := []int{v}
				for v != start {
					v = prev[v]
					path = append(path, v)
				}
				slices.Reverse(path)
				return path
			}
			if _, seen := prev[w]; !seen {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return []int{start} // not reached: a component with a cycle has one through start
}

// reachesTest reports whether task i depends, directly or not, on a test
// task.
func (g depGraph) reachesTest(i int) bool {
	seen := make([]bool, len(g.deps))
	todo := slices.Clone(g.deps[i])
	for len(todo) > 0 {
		v := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[v] {
			continue
		}
		seen[v] = true
		if g.tasks[v].Type == TypeTest {
			return true
		}
		todo = append(todo, g.deps[v]...)
	}
	return false
}

// phasesFor returns the plan's phases by its mode: one task per phase in
// document order in task mode, dependency layers in phased mode.
func phasesFor(plan Plan) ([]Phase, error) {
	if plan.Mode == ModePhased {
		return LayerPhases(plan.Tasks)
	}
	phases := make([]Phase, len(plan.Tasks))
	for i, t := range plan.Tasks {
		phases[i] = Phase{Index: i, TaskIDs: []string{t.ID}}
	}
	return phases, nil
}

// LayerPhases groups tasks into phases by dependency: a task's phase is the
// length of the longest dependency path from it to a task with no
// dependencies, so every task comes after all of its dependencies and as
// early as it can. Tasks within a phase are in natural id order
// (CompareIDs). It fails with a *PlanError, listing every problem, when ids
// repeat, a dependency is unknown or the dependencies form a cycle.
func LayerPhases(tasks []Task) ([]Phase, error) {
	if ps := checkPlan(Plan{Tasks: tasks}, nil, false); len(ps) > 0 {
		sortProblems(ps)
		return nil, &PlanError{File: "plan", Problems: ps}
	}
	first := make(map[string]int, len(tasks))
	for i, t := range tasks {
		first[t.ID] = i
	}
	g := newDepGraph(tasks, first)
	// Kahn's algorithm: a task's layer is one more than its deepest dependency.
	dependents := make([][]int, len(tasks))
	waiting := make([]int, len(tasks))
	var ready []int
	for i, ds := range g.deps {
		waiting[i] = len(ds)
		for _, d := range ds {
			dependents[d] = append(dependents[d], i)
		}
		if len(ds) == 0 {
			ready = append(ready, i)
		}
	}
	layer := make([]int, len(tasks))
	done, depth := 0, 0
	for len(ready) > 0 {
		v := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		done++
		depth = max(depth, layer[v]+1)
		for _, w := range dependents[v] {
			layer[w] = max(layer[w], layer[v]+1)
			if waiting[w]--; waiting[w] == 0 {
				ready = append(ready, w)
			}
		}
	}
	if done < len(tasks) { // not reached: checkPlan found no cycle
		return nil, fmt.Errorf("%w: dependencies cannot be layered", ErrInvalidPlan)
	}
	phases := make([]Phase, depth)
	for i := range phases {
		phases[i].Index = i
	}
	for i, t := range tasks {
		phases[layer[i]].TaskIDs = append(phases[layer[i]].TaskIDs, t.ID)
	}
	for i := range phases {
		slices.SortFunc(phases[i].TaskIDs, CompareIDs)
	}
	return phases, nil
}

// CompareIDs orders task ids naturally: runs of digits compare as numbers
// and everything else as text, so "2" < "10", "1a" < "1b" < "2" and
// "3.2" < "3.10". It returns -1, 0 or +1.
func CompareIDs(a, b string) int {
	for a != "" && b != "" {
		pa, ra := idPart(a)
		pb, rb := idPart(b)
		da, db := isDigit(pa[0]), isDigit(pb[0])
		var c int
		switch {
		case da && db:
			na, nb := strings.TrimLeft(pa, "0"), strings.TrimLeft(pb, "0")
			if c = cmp.Compare(len(na), len(nb)); c == 0 {
				if c = strings.Compare(na, nb); c == 0 {
					c = cmp.Compare(len(pa), len(pb))
				}
			}
		case da:
			c = -1
		case db:
			c = 1
		default:
			c = strings.Compare(pa, pb)
		}
		if c != 0 {
			return c
		}
		a, b = ra, rb
	}
	return cmp.Compare(len(a), len(b))
}

// idPart splits s into its first run of digits or of non-digits and the rest.
func idPart(s string) (part, rest string) {
	d := isDigit(s[0])
	i := 1
	for i < len(s) && isDigit(s[i]) == d {
		i++
	}
	return s[:i], s[i:]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
