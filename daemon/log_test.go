package daemon

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/gaffer-dev/gaffer/checkpoint"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/serve"
)

// A run's end is logged by how it ended: cut off by a drain or a cancel
// at info as the caller's "stopped" message, taken over by another host
// as a warning, failed as an error; each with the newest checkpoint's
// seq it saw.
func TestEventLoggerRunFinished(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string // the JSON line's level and message
	}{
		{"drained", serve.ErrDrained, `"level":"INFO","msg":"run drained at checkpoint"`},
		{"cancelled", context.Canceled, `"level":"INFO","msg":"run drained at checkpoint"`},
		{"fenced", checkpoint.ErrFenced, `"level":"WARN","msg":"run taken over by another host; this host stopped its attempt"`},
		{"failed", errors.New("boom"), `"level":"ERROR","msg":"run failed"`},
		{"stopped", nil, `"level":"INFO","msg":"run stopped"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := EventLogger(slog.New(slog.NewJSONHandler(&buf, nil)), "run drained at checkpoint")
			log(graph.Event{Kind: graph.CheckpointSaved, RunID: "r-1", Seq: 7})
			log(graph.Event{Kind: graph.RunFinished, RunID: "r-1", Seq: 3, Err: tc.err})
			if got := buf.String(); !strings.Contains(got, tc.want) || !strings.Contains(got, `"run":"r-1"`) || !strings.Contains(got, `"seq":7`) {
				t.Errorf("log %s: want %s for run r-1 at seq 7 (its newest checkpoint)", got, tc.want)
			}
		})
	}
}
