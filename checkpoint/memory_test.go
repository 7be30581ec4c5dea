package checkpoint

import (
	"context"
	"errors"
	"testing"
)

func TestMemorySmoke(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	defer m.Close()
	v := []byte("hello")
	if err := m.Put(ctx, Checkpoint{RunID: "r", Seq: 1, Values: map[string][]byte{"a": v}}, PutOptions{}); err != nil {
		t.Fatal(err)
	}
	v[0] = 'X'
	got, err := m.Latest(ctx, "r")
	if err != nil || string(got.Values["a"]) != "hello" {
		t.Fatalf("Latest = %v, %v", got, err)
	}
	if err := m.Put(ctx, Checkpoint{RunID: "r", Seq: 1}, PutOptions{}); !errors.Is(err, ErrConflict) {
		t.Fatalf("dup Put = %v, want ErrConflict", err)
	}
}
