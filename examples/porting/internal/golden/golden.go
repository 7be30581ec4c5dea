package golden

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// Check runs a porting example's main with its standard output captured and
// compares the output with testdata/<name>.out, the output both versions of
// the program (the new API's and today's, in before/) must print. With
// anyOrder the lines are compared as a set, for a program whose order
// depends on timing.
func Check(t *testing.T, name string, main func(), anyOrder bool) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	want, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	got := capture(t, main)
	g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	if anyOrder {
		slices.Sort(g)
		slices.Sort(w)
	}
	if !slices.Equal(g, w) {
		t.Errorf("%s printed:\n%s\nwant:\n%s", name, got, want)
	}
}

// capture runs f with os.Stdout going to a pipe and returns what it wrote.
func capture(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		var b bytes.Buffer
		_, _ = io.Copy(&b, r)
		done <- b.Bytes()
	}()
	defer func() { os.Stdout = stdout }()
	f()
	w.Close()
	os.Stdout = stdout
	return string(<-done)
}
