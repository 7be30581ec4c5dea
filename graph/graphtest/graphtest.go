package graphtest

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/gaffer-dev/gaffer/graph"
)

// CheckPure runs node twice on in and fails t if the node breaks the rule
// that a node never mutates its input:
//
//   - in's JSON encoding changed (the node wrote through a pointer, slice or
//     map it was given), or
//   - the first output changed when the node ran again on the same input (the
//     outputs share memory with the input, typically an append into a slice's
//     spare capacity, which makes fan-out branches overwrite each other).
//
// It returns the first output. The node runs outside a run: Interrupt
// returns an error and Emit does nothing. Only exported fields are compared.
func CheckPure[S any](t testing.TB, node graph.NodeFunc[S], in S) S {
	t.Helper()
	ctx := context.Background()
	before := encode(t, in)
	out1, err := node(ctx, in)
	if err != nil {
		t.Fatalf("graphtest: node failed: %v", err)
	}
	first := encode(t, out1)
	if after := encode(t, in); !bytes.Equal(before, after) {
		t.Errorf("graphtest: node mutated its input:\nbefore %s\nafter  %s", before, after)
		return out1
	}
	if _, err := node(ctx, in); err != nil {
		t.Fatalf("graphtest: node failed on its second run: %v", err)
	}
	if again := encode(t, out1); !bytes.Equal(first, again) {
		t.Errorf("graphtest: node output shares memory with its input (append into spare capacity?):\nfirst output %s\nchanged to   %s", first, again)
	}
	if after := encode(t, in); !bytes.Equal(before, after) {
		t.Errorf("graphtest: node mutated its input on its second run:\nbefore %s\nafter  %s", before, after)
	}
	return out1
}

func encode(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("graphtest: encode state: %v", err)
	}
	return b
}
