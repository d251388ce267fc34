package review

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MaxMessageBytes caps the final message a report is extracted from.
const MaxMessageBytes = 1 << 20

// Extract finds the one JSON object in an agent's final message: bare, with
// prose around it, or in a fenced block. No object, an incomplete one, or
// more than one is an error that says which, so the agent can correct itself.
func Extract(msg string) ([]byte, error) {
	if len(msg) > MaxMessageBytes {
		return nil, fmt.Errorf("the final message is %d bytes; the limit is %d", len(msg), MaxMessageBytes)
	}
	var (
		found   [][]byte
		badErr  error
		depth   int
		start   int
		inStr   bool
		escaped bool
	)
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if depth > 0 && inStr {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			if depth > 0 {
				inStr = true
			}
		case '{':
			if depth == 0 {
				start = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			cand := []byte(msg[start : i+1])
			if err := syntaxCheck(cand); err != nil {
				if badErr == nil {
					badErr = err
				}
				continue
			}
			found = append(found, cand)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return nil, fmt.Errorf("found %d JSON objects; the final message must contain exactly one", len(found))
	case badErr != nil:
		return nil, badErr
	case depth > 0:
		return nil, fmt.Errorf("the JSON object starting at byte %d is incomplete (truncated?)", start)
	default:
		return nil, fmt.Errorf("no JSON object found in the final message")
	}
}

func syntaxCheck(b []byte) error {
	if json.Valid(b) {
		return nil
	}
	var v any
	err := json.Unmarshal(b, &v)
	var se *json.SyntaxError
	if ok := asSyntax(err, &se); ok {
		line := 1 + bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n"))
		return fmt.Errorf("invalid JSON at line %d of the object: %v", line, se)
	}
	return fmt.Errorf("invalid JSON: %v", err)
}

func asSyntax(err error, se **json.SyntaxError) bool {
	s, ok := err.(*json.SyntaxError)
	if ok {
		*se = s
	}
	return ok
}
