// Command mcpwrite is a stdio MCP server with one tool, write_file {path,
// content}, that writes content (a string as is, anything else as JSON)
// to path, relative to its working directory: the kind of MCP write tool
// whetstone's gate must deny during a run, however its input is nested.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func main() {
	in := bufio.NewReader(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			var req request
			if json.Unmarshal(line, &req) == nil && req.ID != nil {
				result, rpcErr := answer(req)
				resp := map[string]any{"jsonrpc": "2.0", "id": req.ID}
				if rpcErr != "" {
					resp["error"] = map[string]any{"code": -32601, "message": rpcErr}
				} else {
					resp["result"] = result
				}
				out.Encode(resp)
			}
		}
		if err != nil {
			return
		}
	}
}

func answer(req request) (any, string) {
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(req.Params, &p)
		return map[string]any{"protocolVersion": p.ProtocolVersion, "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "files", "version": "1"}}, ""
	case "ping":
		return map[string]any{}, ""
	case "tools/list":
		return map[string]any{"tools": []any{map[string]any{
			"name": "write_file", "description": "Write content to the file at path.",
			"inputSchema": map[string]any{"type": "object", "required": []string{"path", "content"},
				"properties": map[string]any{"path": map[string]any{"type": "string"}, "content": map[string]any{}}},
		}}}, ""
	case "tools/call":
		var p struct {
			Arguments struct {
				Path    string          `json:"path"`
				Content json.RawMessage `json:"content"`
			} `json:"arguments"`
		}
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return toolText(fmt.Sprintf("bad arguments: %v", err)), ""
		}
		data := []byte(p.Arguments.Content)
		var s string
		if json.Unmarshal(data, &s) == nil {
			data = []byte(s)
		}
		if err := os.WriteFile(p.Arguments.Path, data, 0o644); err != nil {
			return toolText(err.Error()), ""
		}
		return toolText("wrote " + p.Arguments.Path), ""
	}
	return nil, "unknown method " + req.Method
}

func toolText(s string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
}
