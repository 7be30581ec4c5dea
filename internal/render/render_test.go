package render

import "testing"

func TestRender(t *testing.T) {
	if got := Short("0123456789abcdef"); got != "0123456" {
		t.Errorf("Short = %q", got)
	}
	if got := Short("abc"); got != "abc" {
		t.Errorf("Short of a short hash = %q", got)
	}
	if got := Plural(1, "path"); got != "1 path" {
		t.Errorf("Plural(1) = %q", got)
	}
	if got := Plural(3, "path"); got != "3 paths" {
		t.Errorf("Plural(3) = %q", got)
	}
	if got := ListPaths([]string{"a", "b"}, 2); got != "a, b" {
		t.Errorf("ListPaths within max = %q", got)
	}
	if got := ListPaths([]string{"a", "b", "c", "d"}, 2); got != "a, b and 2 more" {
		t.Errorf("ListPaths over max = %q", got)
	}
	if got, cut := Clip("héllo", 2); got != "h" || !cut {
		t.Errorf("Clip inside a rune = %q, %v; want \"h\", true", got, cut)
	}
	if got, cut := Clip("abc", 3); got != "abc" || cut {
		t.Errorf("Clip within max = %q, %v", got, cut)
	}
}
