package notes

import "testing"

func TestSaveLines(t *testing.T) {
	s := &Store{Dir: t.TempDir()}
	if err := s.Save("todo", "a\nb\n"); err != nil {
		t.Fatal(err)
	}
	lines, err := s.Lines("todo")
	if err != nil || len(lines) != 2 || lines[1] != "b" {
		t.Fatalf("Lines = %q, %v", lines, err)
	}
}
