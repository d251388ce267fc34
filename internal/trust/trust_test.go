package trust

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestStore: a file is trusted by its exact bytes under its project's
// root; another root, a changed file or a removed entry is not; the file
// is private; one that cannot be read trusts nothing.
func TestStore(t *testing.T) {
	dir := t.TempDir()
	st := For(filepath.Join(dir, "state", "key"))
	root, other := t.TempDir(), t.TempDir()
	data := []byte(`{"sandbox": "off"}`)
	if ok, err := st.Trusted(root, data); ok || err != nil {
		t.Fatalf("Trusted before any trust = %v, %v", ok, err)
	}
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	if err := st.Add(Entry{Root: root, SHA256: Sum(data), Settings: []string{`"sandbox": "off"`}, At: at}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		root string
		data []byte
		want bool
	}{
		{root, data, true},
		{root + "/", data, true},
		{other, data, false},
		{root, []byte(`{"sandbox": "off" }`), false},
	} {
		if ok, err := st.Trusted(tc.root, tc.data); ok != tc.want || err != nil {
			t.Errorf("Trusted(%s, %s) = %v, %v; want %v", tc.root, tc.data, ok, err, tc.want)
		}
	}
	info, err := os.Stat(st.Path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("trust file mode = %v, %v; want 0600", info.Mode(), err)
	}
	// Trusting again replaces the project's entry: one file per project.
	changed := []byte(`{"sandbox": "off", "depth": "quick"}`)
	if err := st.Add(Entry{Root: root, SHA256: Sum(changed), At: at}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := st.Trusted(root, data); ok {
		t.Error("the old file is still trusted after another was")
	}
	list, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Entry{{Root: Key(root), SHA256: Sum(changed), At: at}}, list); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if found, err := st.Remove(root); !found || err != nil {
		t.Errorf("Remove = %v, %v; want found", found, err)
	}
	if found, err := st.Remove(root); found || err != nil {
		t.Errorf("Remove again = %v, %v; want not found", found, err)
	}
	if ok, _ := st.Trusted(root, changed); ok {
		t.Error("a removed file is still trusted")
	}
	os.WriteFile(st.Path, []byte("{not json"), 0o600)
	if ok, err := st.Trusted(root, changed); ok || err == nil {
		t.Errorf("Trusted with a broken trust file = %v, %v; want false and an error", ok, err)
	}
}
