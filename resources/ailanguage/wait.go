package ailanguage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"

	"github.com/reconcile-dev/reconcile/internal/untrusted"
	"github.com/reconcile-dev/reconcile/resources"
)

// Lifecycle states every AI Language object shares (the SDK's
// EndpointLifecycleStateEnum, ModelLifecycleStateEnum and
// ProjectLifecycleStateEnum have the same values).
const (
	StateCreating = "CREATING"
	StateActive   = "ACTIVE"
	StateUpdating = "UPDATING"
	StateDeleting = "DELETING"
	StateDeleted  = "DELETED"
	StateFailed   = "FAILED"
)

// Wait says what Client.Wait waits for.
type Wait struct {
	// Kind names the object in messages: "endpoint", "project", "model".
	Kind string
	// Target is the lifecycle state waited for.
	Target string
	// WorkRequest, optional, is the operation's work request: its
	// percentage is reported and it must succeed.
	WorkRequest string
	// Get reads the object: its lifecycle state and lifecycleDetails, or
	// an error (matching resources.ErrNotFound when it is gone).
	Get func(ctx context.Context) (state, details string, err error)
}

// Wait polls the work request (if any) and the object until the object
// reaches the target state (for DELETED, also when it is gone), reporting
// "state X, work request N% complete" on each poll (resources.Progress).
// It fails when the object ends FAILED (with its lifecycleDetails), when
// the work request fails or is cancelled, or when the object is being
// deleted while waiting for another state: those errors match
// resources.ErrUnusable. It fails too when ctx ends (saying in which state
// and after how long) or a poll fails, with errors that do not.
func (c *Client) Wait(ctx context.Context, w Wait, start time.Time) error {
	sdk, err := c.SDK()
	if err != nil {
		return err
	}
	state, percent := "unknown", -1.0
	timedOut := func() error {
		what := "timed out"
		if errors.Is(ctx.Err(), context.Canceled) {
			what = "cancelled"
		}
		at := "state " + state
		if percent >= 0 {
			at += fmt.Sprintf(", work request %.0f%% complete", percent)
		}
		return fmt.Errorf("%s after %s waiting for the %s to become %s (still %s): %w",
			what, time.Since(start).Round(time.Millisecond), w.Kind, w.Target, at, ctx.Err())
	}
	for {
		var wrStatus ailanguage.OperationStatusEnum
		if w.WorkRequest != "" {
			resp, err := sdk.GetWorkRequest(Ctx(ctx), ailanguage.GetWorkRequestRequest{WorkRequestId: &w.WorkRequest})
			if ctx.Err() != nil {
				return timedOut()
			}
			if err != nil {
				return fmt.Errorf("get work request %q: %w", w.WorkRequest, APIErr(err))
			}
			wrStatus = resp.Status
			if resp.PercentComplete != nil {
				percent = float64(*resp.PercentComplete)
			}
		}
		s, details, err := w.Get(ctx)
		if ctx.Err() != nil {
			return timedOut()
		}
		if errors.Is(err, resources.ErrNotFound) && w.Target == StateDeleted {
			return nil
		}
		if err != nil {
			return err
		}
		state = s
		if percent >= 0 {
			resources.Progress(ctx, "state %s, work request %.0f%% complete", state, percent)
		} else {
			resources.Progress(ctx, "state %s", state)
		}

		switch {
		case state == StateFailed && w.Target != StateFailed:
			if details == "" {
				details = "no lifecycleDetails given"
			}
			return resources.Unusable(fmt.Errorf("%s is FAILED: %s", w.Kind, untrusted.Text(details)))
		case wrStatus == ailanguage.OperationStatusFailed || wrStatus == ailanguage.OperationStatusCanceled:
			return resources.Unusable(fmt.Errorf("work request %s %s: %s", w.WorkRequest, wrStatus, workRequestErrors(ctx, sdk, w.WorkRequest)))
		case state == w.Target && (wrStatus == "" || wrStatus == ailanguage.OperationStatusSucceeded || w.Target == StateDeleted):
			return nil
		case w.Target != StateDeleted && (state == StateDeleting || state == StateDeleted):
			return resources.Unusable(fmt.Errorf("%s is %s while waiting for %s", w.Kind, state, w.Target))
		}

		t := time.NewTimer(c.PollInterval())
		select {
		case <-ctx.Done():
			t.Stop()
			return timedOut()
		case <-t.C:
		}
	}
}

// workRequestErrors summarises a failed work request's errors.
func workRequestErrors(ctx context.Context, sdk ailanguage.AIServiceLanguageClient, id string) string {
	resp, err := sdk.ListWorkRequestErrors(Ctx(ctx), ailanguage.ListWorkRequestErrorsRequest{WorkRequestId: &id})
	if err != nil {
		return fmt.Sprintf("listing its errors: %v", APIErr(err))
	}
	var msgs []string
	for _, e := range resp.Items {
		msgs = append(msgs, untrusted.Text(Deref(e.Code))+": "+untrusted.Text(Deref(e.Message)))
	}
	if len(msgs) == 0 {
		return "no errors reported"
	}
	return strings.Join(msgs, "; ")
}

// WithIfMatch runs call with the etag as if-match; on 412 it reads the
// current etag with etagOf and runs call once more. Errors come back
// converted with ObjectErr.
func WithIfMatch(etag string, etagOf func() (string, error), call func(ifMatch *string) error) error {
	ptr := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	err := ObjectErr(call(ptr(etag)))
	if HasStatus(err, 412) {
		fresh, gerr := etagOf()
		if gerr != nil {
			return gerr
		}
		err = ObjectErr(call(ptr(fresh)))
	}
	return err
}
