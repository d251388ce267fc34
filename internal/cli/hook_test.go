package cli

import (
	"context"
	"testing"
	"time"

	"github.com/whetstone-dev/whetstone/internal/hook"
)

// TestGateWithinDeadline: a gate that answers in time is the answer; one
// that is still deciding the grace after the hook's deadline is refused
// then, before the client's own timeout (which Codex takes for no
// objection); without a deadline nothing is cut short.
func TestGateWithinDeadline(t *testing.T) {
	p := hook.Payload{Client: "codex"}
	allow := func() *hook.Response { return nil }
	stuck := make(chan struct{})
	defer close(stuck)
	hang := func() *hook.Response { <-stuck; return nil }

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if resp, late := within(ctx, 20*time.Millisecond, p, allow); resp != nil || late {
		t.Errorf("a gate that answered in time: %+v, late %v; want its answer", resp, late)
	}
	start := time.Now()
	resp, late := within(ctx, 20*time.Millisecond, p, hang)
	if !late || resp == nil || resp.Specific == nil || resp.Specific.PermissionDecision != "deny" || resp.Specific.PermissionDecisionReason == "" {
		t.Fatalf("a gate past its deadline: %+v, late %v; want a refusal", resp, late)
	}
	if waited := time.Since(start); waited > 2*time.Second {
		t.Errorf("the refusal came after %v", waited)
	}
	if resp, late := within(context.Background(), time.Millisecond, p, func() *hook.Response { time.Sleep(30 * time.Millisecond); return nil }); resp != nil || late {
		t.Errorf("no deadline: %+v, late %v; want the gate's own answer", resp, late)
	}
}
