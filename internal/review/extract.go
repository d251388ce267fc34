package review

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// MaxMessageBytes caps the final message a report is extracted from.
const MaxMessageBytes = 1 << 20

// Extract finds the report in an agent's final message: the last fenced
// ```json block, or else the one JSON object with a "schema" key (else with
// a "findings" or "results" key). A valid last block that is no report (an
// example after it) gives way to the last block that is one; the same
// report sent twice is one report. Braces in the prose around it (Go's
// map[string]int{}, struct{}, a lone "{") and in code blocks of other
// languages never matter. A broken or missing report is an error that says
// what to send instead.
func Extract(msg string) ([]byte, error) {
	if len(msg) > MaxMessageBytes {
		return nil, fmt.Errorf("the final message is %d bytes; the limit is %d", len(msg), MaxMessageBytes)
	}
	if blocks := jsonFences(msg); len(blocks) > 0 {
		last := blocks[len(blocks)-1]
		raw := bytes.TrimSpace([]byte(last.content))
		if err := syntaxCheck(raw); err != nil {
			return nil, fmt.Errorf("the json block at line %d: %w", last.line, err)
		}
		if reportKeys(raw, reportMarkers...) {
			return raw, nil
		}
		for i := len(blocks) - 2; i >= 0; i-- {
			if earlier := bytes.TrimSpace([]byte(blocks[i].content)); reportKeys(earlier, reportMarkers...) {
				return earlier, nil
			}
		}
		if len(raw) == 0 || raw[0] != '{' {
			return nil, fmt.Errorf("the json block at line %d must hold one JSON object (the report)", last.line)
		}
		return raw, nil
	}
	return schemaObject(msg)
}

// reportMarkers are the top-level keys that make a JSON object a report.
var reportMarkers = []string{"schema", "findings", "results", "verdict", "fix_checks"}

// reportKeys reports whether raw is a JSON object with one of keys, in any
// case.
func reportKeys(raw []byte, keys ...string) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return false
	}
	for k := range obj {
		if _, ok := fold(k, nil, keys...); ok {
			return true
		}
	}
	return false
}

type fenced struct {
	content string
	line    int
}

// jsonFences returns the fenced code blocks whose info string is json, and
// the line each starts on. An unclosed block runs to the end of the message
// (a truncated report is then a JSON error, not "none").
func jsonFences(msg string) []fenced {
	var blocks []fenced
	lines := strings.SplitAfter(msg, "\n")
	for i := 0; i < len(lines); i++ {
		fence, info, open := openFence(lines[i])
		if !open {
			continue
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(lines) && !closesFence(lines[j], fence); j++ {
			b.WriteString(lines[j])
		}
		if lang, _, _ := strings.Cut(strings.ToLower(info), " "); lang == "json" {
			blocks = append(blocks, fenced{b.String(), i + 1})
		}
		i = j
	}
	return blocks
}

// openFence recognises a CommonMark code fence: up to three spaces, then
// three or more backticks or tildes, then the info string.
func openFence(line string) (fence, info string, ok bool) {
	s := strings.TrimRight(line, "\r\n")
	trimmed := strings.TrimLeft(s, " ")
	if len(s)-len(trimmed) > 3 || len(trimmed) < 3 || (trimmed[0] != '`' && trimmed[0] != '~') {
		return "", "", false
	}
	n := 0
	for n < len(trimmed) && trimmed[n] == trimmed[0] {
		n++
	}
	if n < 3 {
		return "", "", false
	}
	info = strings.TrimSpace(trimmed[n:])
	if trimmed[0] == '`' && strings.Contains(info, "`") {
		return "", "", false
	}
	return trimmed[:n], info, true
}

func closesFence(line, fence string) bool {
	s := strings.TrimSpace(line)
	return len(s) >= len(fence) && strings.Trim(s, fence[:1]) == "" && len(line)-len(strings.TrimLeft(line, " ")) <= 3
}

// maxScan bounds the work of looking for bare objects, as a multiple of the
// message's length: hostile nesting cannot make a hook slow.
const maxScan = 16

// schemaObject finds the one JSON object with a "schema" key in prose.
// Every "{" is a possible start; an object that decodes is skipped whole, so
// its inner objects are not candidates.
func schemaObject(msg string) ([]byte, error) {
	var (
		found   [][]byte
		shaped  [][]byte // objects with findings or results but no schema
		work    int
		lastErr error
	)
	for i := 0; i < len(msg); i++ {
		if msg[i] != '{' {
			continue
		}
		if work > maxScan*len(msg)+1024 {
			return nil, fmt.Errorf("the final message has too many braces to search; put the report in one ```json block")
		}
		dec := json.NewDecoder(strings.NewReader(msg[i:]))
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				work += int(se.Offset)
			} else {
				work += len(msg) - i
			}
			if hasSchemaKey(msg[i:]) {
				lastErr = objectError(msg, i, err)
			}
			continue
		}
		end := i + int(dec.InputOffset())
		work += end - i
		switch {
		case reportKeys(raw, "schema"):
			found = append(found, []byte(msg[i:end]))
		case reportKeys(raw, "findings", "results"):
			shaped = append(shaped, []byte(msg[i:end]))
		}
		i = end - 1
	}
	if len(found) == 0 {
		found = shaped
	}
	found = slices.CompactFunc(found, func(a, b []byte) bool { return sameJSON(a, b) })
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return nil, fmt.Errorf("found %d JSON objects with a \"schema\" key; the final message must contain exactly one report, in one ```json block", len(found))
	case lastErr != nil:
		return nil, lastErr
	default:
		return nil, fmt.Errorf("no JSON report found: end your final message with one ```json block holding the report")
	}
}

// hasSchemaKey reports whether an object starting at s opens with a
// "schema" key, the usual first key of a report: only such a broken object
// is worth an error message of its own.
func hasSchemaKey(s string) bool {
	rest := strings.TrimLeft(s[1:], " \t\r\n")
	return strings.HasPrefix(rest, `"schema"`)
}

func objectError(msg string, start int, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("the JSON object starting at byte %d is incomplete (truncated?)", start)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + strings.Count(msg[start:min(start+int(se.Offset), len(msg))], "\n")
		return fmt.Errorf("invalid JSON at line %d of the object: %v", line, se)
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

// sameJSON reports whether two JSON texts differ at most in white space.
func sameJSON(a, b []byte) bool {
	var ca, cb bytes.Buffer
	return json.Compact(&ca, a) == nil && json.Compact(&cb, b) == nil && bytes.Equal(ca.Bytes(), cb.Bytes())
}

func syntaxCheck(b []byte) error {
	if json.Valid(b) {
		return nil
	}
	var v any
	err := json.Unmarshal(b, &v)
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Error() == "unexpected end of JSON input" {
		return fmt.Errorf("the JSON object is incomplete (truncated?)")
	}
	if errors.As(err, &se) {
		line := 1 + bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n"))
		return fmt.Errorf("invalid JSON at line %d of the object: %v", line, se)
	}
	return fmt.Errorf("invalid JSON: %v", err)
}
