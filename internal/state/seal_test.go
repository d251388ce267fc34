package state_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"

	"github.com/whetstone-dev/whetstone/internal/state"
)

func testKey(t testing.TB) state.Key {
	t.Helper()
	k := make(state.Key, state.KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

const stateName = ".whetstone/runs/r1/state.json"

var macTail = regexp.MustCompile(`[{,]"mac":"([0-9a-f]{64})"}$`)

// sealBodies are bodies Seal must round-trip exactly: compact and indented,
// with and without the final newline that marshal writes, nested objects,
// and a "mac" key of the body's own, which is data like any other.
var sealBodies = []string{
	`{"phase":"review","iteration":1}`,
	"{\n  \"phase\": \"done\",\n  \"verdict\": \"pass\"\n}\n",
	`{"a":{"b":{}},"c":[1,2,{"d":"}"}]}`,
	`{"mac":"not ours"}`,
	"{}",
	"{}\n",
	` {"lead":"space"}`,
}

func TestSealOpenRoundTrip(t *testing.T) {
	key := testKey(t)
	for _, body := range sealBodies {
		sealed := state.Seal(key, state.KindState, stateName, []byte(body))
		var v map[string]any
		if err := json.Unmarshal(sealed, &v); err != nil {
			t.Errorf("Seal(%q) = %q is not JSON: %v", body, sealed, err)
		}
		// The MAC is the last field (gjson finds a body's own "mac" first;
		// encoding/json keeps the last).
		if tail := strings.TrimSpace(string(sealed)); !macTail.MatchString(tail) {
			t.Errorf("Seal(%q) = %q: no 64-hex mac as the last field", body, sealed)
		} else if mac := macTail.FindStringSubmatch(tail)[1]; !strings.Contains(body, `"mac"`) && gjson.GetBytes(sealed, "mac").String() != mac {
			t.Errorf("gjson reads mac %q from %q", gjson.GetBytes(sealed, "mac").String(), sealed)
		}
		var orig map[string]any
		if err := json.Unmarshal([]byte(body), &orig); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(body, `"mac"`) {
			delete(v, "mac")
			if diff := cmp.Diff(orig, v); diff != "" {
				t.Errorf("encoding/json reads Seal(%q) differently (-body +sealed):\n%s", body, diff)
			}
		}
		if bytes.HasSuffix([]byte(body), []byte("\n")) != bytes.HasSuffix(sealed, []byte("\n")) {
			t.Errorf("Seal(%q) = %q: trailing newline not kept", body, sealed)
		}
		got, err := state.Open(key, state.KindState, stateName, sealed)
		if err != nil {
			t.Errorf("Open(Seal(%q)) = %v", body, err)
			continue
		}
		want := body
		if strings.TrimSpace(body) == "{}" {
			want = strings.Replace(body, " ", "", -1)
		}
		if diff := cmp.Diff(want, string(got)); diff != "" {
			t.Errorf("Open(Seal(%q)) (-want +got):\n%s", body, diff)
		}
	}
	// Open must not alias its input: callers may reuse the buffer.
	sealed := state.Seal(key, state.KindState, stateName, []byte(sealBodies[0]))
	got, _ := state.Open(key, state.KindState, stateName, sealed)
	for i := range sealed {
		sealed[i] = 'x'
	}
	if string(got) != sealBodies[0] {
		t.Errorf("Open's result changed with its input: %q", got)
	}
}

// TestOpenEveryByteMatters flips each byte of sealed files, body and MAC
// alike, and adds and removes bytes at the end: every change is ErrTampered.
func TestOpenEveryByteMatters(t *testing.T) {
	key := testKey(t)
	for _, body := range sealBodies {
		sealed := state.Seal(key, state.KindState, stateName, []byte(body))
		for i := range sealed {
			for _, flip := range []byte{0x01, 0x20, 0x80} {
				bad := bytes.Clone(sealed)
				bad[i] ^= flip
				if _, err := state.Open(key, state.KindState, stateName, bad); !errors.Is(err, state.ErrTampered) {
					t.Fatalf("body %q, byte %d ^ %#x: Open(%q) = %v, want ErrTampered", body, i, flip, bad, err)
				}
			}
		}
		for _, bad := range [][]byte{
			append(bytes.Clone(sealed), '\n', '\n'),
			append(bytes.Clone(sealed), ' '),
			bytes.TrimSuffix(sealed, []byte("\n")),
			append(bytes.Clone(sealed), '\n'),
			sealed[:len(sealed)-1],
			sealed[1:],
			[]byte(strings.ToUpper(string(sealed))),
		} {
			if bytes.Equal(bad, sealed) {
				continue // e.g. trimming a newline that is not there
			}
			if _, err := state.Open(key, state.KindState, stateName, bad); !errors.Is(err, state.ErrTampered) {
				t.Errorf("Open(%q) = %v, want ErrTampered", bad, err)
			}
		}
	}
}

// TestOpenBindsKindNameAndKey checks that a sealed file verifies only where
// it was sealed: another run, another reviewer, another iteration, the other
// kind and another key all refuse it.
func TestOpenBindsKindNameAndKey(t *testing.T) {
	key := testKey(t)
	report := ".whetstone/runs/r1/iter-1/security.json"
	sealed := state.Seal(key, state.KindReport, report, []byte(`{"verdict":"pass","findings":[]}`))
	if _, err := state.Open(key, state.KindReport, report, sealed); err != nil {
		t.Fatalf("Open where sealed: %v", err)
	}
	tests := []struct {
		name string
		key  state.Key
		kind string
		file string
	}{
		{"another reviewer", key, state.KindReport, ".whetstone/runs/r1/iter-1/tests.json"},
		{"another iteration", key, state.KindReport, ".whetstone/runs/r1/iter-2/security.json"},
		{"another run", key, state.KindReport, ".whetstone/runs/r2/iter-1/security.json"},
		{"read as a state", key, state.KindState, report},
		{"kind and name run together", key, state.KindReport + ".whetstone", "/runs/r1/iter-1/security.json"},
		{"another key", testKey(t), state.KindReport, report},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := state.Open(tt.key, tt.kind, tt.file, sealed)
			if !errors.Is(err, state.ErrTampered) {
				t.Fatalf("Open = %v, want ErrTampered", err)
			}
			if !strings.Contains(err.Error(), tt.file) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestOpenUnsealed(t *testing.T) {
	key := testKey(t)
	mac := strings.Repeat("0", 64)
	for _, in := range []string{
		"",
		"{}",
		`{"phase":"done","verdict":"pass"}`,
		`{"phase":"done","verdict":"pass","mac":"` + mac + `"}`,
		`{"mac":"` + mac + `"}`,
		`{,"mac":"` + mac + `"}`,
		`,"mac":"` + mac + `"}`,
		`x,"mac":"` + mac + `"}`,
		`"mac":"` + mac + `"}`,
	} {
		if _, err := state.Open(key, state.KindState, stateName, []byte(in)); !errors.Is(err, state.ErrTampered) {
			t.Errorf("Open(%q) = %v, want ErrTampered", in, err)
		}
	}
	if _, err := state.Open(nil, state.KindState, stateName, []byte("{}")); err == nil || errors.Is(err, state.ErrTampered) {
		t.Errorf("Open with no key = %v, want an error about the key", err)
	}
}

// TestOpenOnlyWhatSealWrites: the empty object has one sealed form; the
// comma form of it, which Open could otherwise accept under the right MAC,
// is refused.
func TestOpenOnlyWhatSealWrites(t *testing.T) {
	key := testKey(t)
	sealed := state.Seal(key, state.KindState, stateName, []byte("{}"))
	mac := gjson.GetBytes(sealed, "mac").String()
	for _, other := range []string{`{,"mac":"` + mac + `"}`, `{ ,"mac":"` + mac + `"}`, ` {"mac":"` + mac + `"}`} {
		if _, err := state.Open(key, state.KindState, stateName, []byte(other)); !errors.Is(err, state.ErrTampered) {
			t.Errorf("Open(%q) = %v, want ErrTampered", other, err)
		}
	}
}

func TestSealPanicsOnWhatIsNotAnObject(t *testing.T) {
	key := testKey(t)
	for _, body := range []string{"", "{", "}", "[]", `"x"`, "null", "{} x", "x {}"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Seal(%q) did not panic", body)
				}
			}()
			state.Seal(key, state.KindState, stateName, []byte(body))
		}()
	}
	defer func() {
		if recover() == nil {
			t.Error("Seal with an empty key did not panic")
		}
	}()
	state.Seal(nil, state.KindState, stateName, []byte("{}"))
}

// FuzzOpen: Open never panics, accepts only what Seal writes (re-sealing
// what it returns gives back its input, byte for byte), and never verifies
// anything under a key the input could not have been sealed with.
func FuzzOpen(f *testing.F) {
	key := make([]byte, state.KeySize)
	for _, body := range sealBodies {
		f.Add(key, state.KindState, stateName, state.Seal(key, state.KindState, stateName, []byte(body)))
	}
	f.Add([]byte("k"), state.KindReport, "r", []byte(`{"mac":"`+strings.Repeat("a", 64)+`"}`+"\n"))
	f.Add([]byte{}, "", "", []byte(`,"mac":"`+strings.Repeat("a", 64)+`"}`))
	fresh := testKey(f)
	f.Fuzz(func(t *testing.T, key []byte, kind, name string, in []byte) {
		if body, err := state.Open(fresh, kind, name, in); err == nil {
			t.Fatalf("Open(%q) verified under a fresh random key as %q", in, body)
		}
		body, err := state.Open(key, kind, name, in)
		if err != nil {
			return
		}
		if again := state.Seal(key, kind, name, body); !bytes.Equal(again, in) {
			t.Fatalf("Open(%q) = %q, which Seal writes as %q", in, body, again)
		}
	})
}
