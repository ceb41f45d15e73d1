package backend

import "testing"

func TestRel(t *testing.T) {
	tests := []struct{ dir, name, want string }{
		{".", "a/b", "a/b"},
		{".", ".", "."},
		{"a", "a", "."},
		{"a", "a/b", "b"},
		{"a/b", "a/c/x", "../c/x"},
		{"a/b", "x", "../../x"},
		{"a/b", ".", "../.."},
		{"ab", "a/x", "../a/x"},
	}
	for _, tt := range tests {
		if got := Rel(tt.dir, tt.name); got != tt.want {
			t.Errorf("Rel(%q, %q) = %q, want %q", tt.dir, tt.name, got, tt.want)
		}
	}
}
