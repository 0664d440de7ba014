package tfx

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// DefaultTimeout is how long a resource that waits (for a deployment, a
// device) waits per operation when its timeouts attribute does not say.
const DefaultTimeout = 20 * time.Minute

// WithTimeout bounds ctx by the duration a timeouts attribute gives for
// one operation (get is its Create, Update or Delete method), or
// DefaultTimeout. It also returns that duration, for messages.
func WithTimeout(ctx context.Context, get func(context.Context, time.Duration) (time.Duration, diag.Diagnostics),
	diags *diag.Diagnostics) (context.Context, context.CancelFunc, time.Duration) {
	d, dd := get(ctx, DefaultTimeout)
	diags.Append(dd...)
	if d <= 0 {
		d = DefaultTimeout
	}
	c, cancel := context.WithTimeout(ctx, d)
	return c, cancel, d
}

// OnlyTimeoutsChange reports whether an update changes nothing but the
// timeouts attribute: there is nothing to do but to save them.
func OnlyTimeoutsChange(req resource.UpdateRequest) bool {
	timeoutsPath := tftypes.NewAttributePath().WithAttributeName("timeouts")
	strip := func(v tftypes.Value) (tftypes.Value, error) {
		return tftypes.Transform(v, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
			if p.Equal(timeoutsPath) {
				return tftypes.NewValue(v.Type(), nil), nil
			}
			return v, nil
		})
	}
	plan, err := strip(req.Plan.Raw)
	if err != nil {
		return false
	}
	state, err := strip(req.State.Raw)
	if err != nil {
		return false
	}
	return plan.Equal(state)
}

// StartUpdate reads the plan and the state of an update into plan and
// state (pointers to the resource's model). It returns false when there is
// nothing more to do: the models could not be read (the error is in resp),
// or the update changes the timeouts attribute alone, which it saves (new
// waits for the next operations: nothing to deploy).
func StartUpdate(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse, plan, state any) bool {
	resp.Diagnostics.Append(req.Plan.Get(ctx, plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, state)...)
	if resp.Diagnostics.HasError() {
		return false
	}
	if OnlyTimeoutsChange(req) {
		resp.Diagnostics.Append(resp.State.Set(ctx, plan)...)
		return false
	}
	return true
}

// TimeoutsAttribute is the `timeouts` attribute of a resource that waits
// (create, update, delete), described for the docs: create, update and del
// say what each operation waits for.
func TimeoutsAttribute(ctx context.Context, create, update, del string) schema.Attribute {
	a := timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})
	nested, ok := a.(schema.SingleNestedAttribute)
	if !ok {
		return a
	}
	nested.MarkdownDescription = fmt.Sprintf("How long qtail waits before it gives up, per operation, as a duration such as `30m` or `1h`. "+
		"Each defaults to `%s`.", DefaultTimeout)
	for name, text := range map[string]string{"create": create, "update": update, "delete": del} {
		if s, ok := nested.Attributes[name].(schema.StringAttribute); ok {
			s.MarkdownDescription = text
			s.Validators = append(s.Validators, PositiveTimeout())
			nested.Attributes[name] = s
		}
	}
	return nested
}

// Sleep waits for d, or until ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// progressEvery is how often a long wait says in the log that it goes on.
var progressEvery = 30 * time.Second

// Wait is one wait for something that takes time (a deployment, a device
// on the tailnet): it logs its start, and every progressEvery while it
// goes on, with what it last saw and the time left before its deadline, so
// that TF_LOG=INFO shows what an apply is waiting for.
type Wait struct {
	what       string
	start      time.Time
	lastReport time.Time
}

// StartWait logs the start of a wait for what ("the proxy device X to join
// the tailnet") and returns it.
func StartWait(ctx context.Context, what string) *Wait {
	now := time.Now()
	fields := map[string]any{"waiting_for": what}
	if deadline, ok := ctx.Deadline(); ok {
		fields["timeout_left"] = time.Until(deadline).Round(time.Second).String()
	}
	tflog.Info(ctx, "waiting for "+what, fields)
	return &Wait{what: what, start: now, lastReport: now}
}

// Progress logs, at most every progressEvery, that the wait goes on and
// what it last saw (state).
func (w *Wait) Progress(ctx context.Context, state string) {
	if time.Since(w.lastReport) < progressEvery {
		return
	}
	w.lastReport = time.Now()
	fields := map[string]any{"waiting_for": w.what, "elapsed": time.Since(w.start).Round(time.Second).String(), "last_seen": state}
	if deadline, ok := ctx.Deadline(); ok {
		fields["timeout_left"] = time.Until(deadline).Round(time.Second).String()
	}
	tflog.Info(ctx, "still waiting for "+w.what, fields)
}

// Sleep reports progress (see Progress) and sleeps d, or until ctx ends.
func (w *Wait) Sleep(ctx context.Context, d time.Duration, state string) error {
	w.Progress(ctx, state)
	return Sleep(ctx, d)
}

// minTimeout is the shortest timeout qtail accepts: no API call, let alone
// a deployment, fits in less.
const minTimeout = time.Second

// PositiveTimeout accepts a duration of at least a second. The timeouts
// attribute's own validator already refuses what time.ParseDuration cannot
// read; this one refuses "0s" and negative durations, which would make
// every operation fail at once.
func PositiveTimeout() validator.String {
	return StringCheck{Rule: "must be a duration of at least 1s, such as 30m or 1h", Check: func(s string) error {
		// A value that is no duration is reported by the timeouts
		// attribute's own validator.
		if d, err := time.ParseDuration(s); err == nil && d < minTimeout {
			return fmt.Errorf("a timeout of %s leaves no time for the operation; use at least 1s (the default is %s)", d, DefaultTimeout)
		}
		return nil
	}}
}
