package state

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
)

// ErrTampered is returned for a sealed file whose MAC is missing or does not
// verify: something other than whetstone wrote it.
var ErrTampered = errors.New("changed outside whetstone")

// Kinds of sealed file. The kind is part of the MAC, so a report cannot be
// passed off as a state or the other way round.
const (
	KindState  = "state"
	KindReport = "report"
)

// macDomain starts every MAC input, so that a whetstone MAC can never be
// mistaken for another use of the same key, and so a future layout can
// change the version.
const macDomain = "whetstone mac v1\x00"

// The seal is a fixed-length suffix, so Open finds it without decoding JSON:
// `,"mac":"<64 hex>"}` after a non-empty object, or the whole object
// `{"mac":"<64 hex>"}` for an empty one.
const (
	macField = `"mac":"`
	macHex   = 2 * sha256.Size
	macTail  = len(macField) + macHex + len(`"}`) // from `"mac"` to the final '}'
)

// Seal returns body with a MAC added as its last field, so the result is
// still one JSON object that encoding/json and gjson read as before. Body
// must be a JSON object: its first and last non-space bytes are '{' and '}'.
// Trailing white space after the object becomes one newline. The MAC covers
// kind, name (the file's path relative to the project root, slash-separated,
// as Name returns it) and body, so a sealed file copied to another name or
// read as another kind does not verify. Seal panics on an empty key or a
// body that is not an object: both are bugs in the caller, which seals only
// what it has just encoded.
func Seal(key Key, kind, name string, body []byte) []byte {
	if len(key) == 0 {
		panic("state.Seal: empty key")
	}
	obj, nl, empty, ok := splitObject(body)
	if !ok {
		panic(fmt.Sprintf("state.Seal %s: body is not a JSON object", name))
	}
	var out []byte
	if empty {
		sum := mac(key, kind, name, []byte("{}"), nl)
		out = make([]byte, 0, 1+macTail+len(nl))
		out = append(out, '{')
		out = append(out, macField...)
		out = hex.AppendEncode(out, sum)
	} else {
		head := obj[:len(obj)-1] // without the final '}'
		sum := mac(key, kind, name, obj, nl)
		out = make([]byte, 0, len(head)+1+macTail+len(nl))
		out = append(out, head...)
		out = append(out, ',')
		out = append(out, macField...)
		out = hex.AppendEncode(out, sum)
	}
	out = append(out, `"}`...)
	return append(out, nl...)
}

// Open checks the MAC Seal added and returns the body as it was sealed
// (without the mac field). Anything Seal could not have produced with this
// key, kind and name is ErrTampered, wrapped with the name. The check looks
// only at the fixed-length suffix and hashes the rest once: no JSON decode.
func Open(key Key, kind, name string, sealed []byte) ([]byte, error) {
	if len(key) == 0 {
		return nil, fmt.Errorf("open %s: no MAC key", name)
	}
	s, nl := sealed, []byte(nil)
	if n := len(s); n > 0 && s[n-1] == '\n' {
		s, nl = s[:n-1], s[n-1:]
	}
	i := len(s) - macTail // index of `"mac":"`
	if i < 1 || string(s[i:i+len(macField)]) != macField || string(s[len(s)-2:]) != `"}` {
		return nil, fmt.Errorf("%s: %w (it has no MAC)", name, ErrTampered)
	}
	got := s[i+len(macField) : i+len(macField)+macHex]
	var body []byte
	switch {
	case i == 1 && s[0] == '{':
		body = []byte("{}")
	case s[i-1] == ',' && nonEmptyObjectHead(s[:i-1]):
		body = make([]byte, 0, i+len(nl))
		body = append(body, s[:i-1]...)
		body = append(body, '}')
	default:
		return nil, fmt.Errorf("%s: %w (it has no MAC)", name, ErrTampered)
	}
	want := hex.AppendEncode(make([]byte, 0, macHex), mac(key, kind, name, body, nl))
	if !hmac.Equal(want, got) {
		return nil, fmt.Errorf("%s: %w (its MAC does not verify)", name, ErrTampered)
	}
	return append(body, nl...), nil
}

// mac is HMAC-SHA256(key, macDomain || len(kind) || kind || len(name) ||
// name || obj || nl), lengths as 4-byte big-endian integers so that no two
// (kind, name) pairs run together into the same input.
func mac(key Key, kind, name string, obj, nl []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(macDomain))
	writeField(h, kind)
	writeField(h, name)
	h.Write(obj)
	h.Write(nl)
	return h.Sum(nil)
}

func writeField(h hash.Hash, s string) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(s)))
	h.Write(n[:])
	h.Write([]byte(s))
}

// splitObject trims trailing white space from body and checks that what is
// left starts with '{' (after leading white space) and ends with '}'. nl is
// "\n" when anything was trimmed, empty when '{' and '}' hold only white
// space.
func splitObject(body []byte) (obj, nl []byte, empty, ok bool) {
	obj = bytes.TrimRight(body, " \t\r\n")
	if len(obj) < len(body) {
		nl = []byte("\n")
	}
	start := bytes.TrimLeft(obj, " \t\r\n")
	if len(start) < 2 || start[0] != '{' || start[len(start)-1] != '}' {
		return nil, nil, false, false
	}
	empty = len(bytes.TrimLeft(start[1:len(start)-1], " \t\r\n")) == 0
	return obj, nl, empty, true
}

// nonEmptyObjectHead reports whether head is what Seal keeps of a non-empty
// object: '{' after optional white space, then something that is not white
// space. Anything else under a valid MAC would be a second encoding of a
// sealed body.
func nonEmptyObjectHead(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n")
	return len(head) > 0 && head[0] == '{' && len(bytes.TrimLeft(head[1:], " \t\r\n")) > 0
}
