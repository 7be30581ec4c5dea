package host

import (
	"context"
	"strings"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/internal/render"
)

// lastErrorTask is the task id of the pending write that keeps why a run
// stopped, at the run's latest checkpoint. The runtime ignores writes it
// did not make, and a checkpoint the run writes once it goes on leaves the
// write behind: the error is shown until the run makes progress, by any
// process that reads the store.
const lastErrorTask = "gaffer:last-error"

// maxLastError is the most bytes of a last error kept.
const maxLastError = 500

// lastErrorLine is msg as a stopped run keeps it: its first line, trimmed,
// at most maxLastError bytes (cut at a rune, ending in "…").
func lastErrorLine(msg string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	line, cut := render.Clip(strings.TrimSpace(line), maxLastError)
	if cut {
		line += "…"
	}
	return line
}

// keepLastError saves msg as why runID stopped, at its latest checkpoint
// (one more write each time the run stops there again: writes are never
// replaced). It is best effort: a store that cannot take it (the cause
// may be that store's outage) loses only this line.
func (h *Host) keepLastError(ctx context.Context, runID, msg string) {
	line := lastErrorLine(msg)
	if line == "" || h.store == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	cp, err := h.store.Latest(ctx, runID)
	if err != nil {
		return
	}
	ws, err := h.store.Writes(ctx, runID, cp.Seq)
	if err != nil {
		return
	}
	n := 0
	for _, w := range ws {
		if w.TaskID == lastErrorTask && w.Index >= n {
			n = w.Index + 1
		}
	}
	_ = h.store.PutWrites(ctx, runID, cp.Seq, []checkpoint.Write{{TaskID: lastErrorTask, Index: n, Value: []byte(line)}}, checkpoint.PutOptions{Sync: true})
}

// lastError is why the run stopped at checkpoint seq, as keepLastError
// saved it, or "" when nothing was saved there.
func (h *Host) lastError(ctx context.Context, runID string, seq uint64) string {
	if h.store == nil {
		return ""
	}
	ws, err := h.store.Writes(ctx, runID, seq)
	if err != nil {
		return ""
	}
	msg, best := "", -1
	for _, w := range ws {
		if w.TaskID == lastErrorTask && w.Index > best {
			msg, best = string(w.Value), w.Index
		}
	}
	return msg
}
