package resources_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/resources"
)

func TestOutcomeErrors(t *testing.T) {
	t.Parallel()
	api := &resources.APIError{Service: "datadog", Status: 403, Message: "Forbidden"}
	for name, tc := range map[string]struct {
		err                       error
		refused, exists, unusable bool
		wantText                  string
	}{
		"refused API error": {
			err:     fmt.Errorf("read the current policy: %w", resources.Refused(api)),
			refused: true, wantText: `read the current policy: datadog API: 403: Forbidden`,
		},
		"exists": {
			err:     fmt.Errorf("create: %w", &resources.ExistsError{Type: "datadog:RestrictionPolicy", ID: "dashboard:x"}),
			refused: true, exists: true, wantText: `create: datadog:RestrictionPolicy "dashboard:x" already exists`,
		},
		"bad input": {
			err:     fmt.Errorf("create: %w", &resources.AttrError{Path: []string{"bindings"}, Err: errors.New("required")}),
			refused: true, wantText: "create: bindings: required",
		},
		"unusable": {
			err:      resources.Unusable(errors.New("endpoint is FAILED: training failed")),
			unusable: true, wantText: "endpoint is FAILED: training failed",
		},
		"plain": {err: errors.New("timed out"), wantText: "timed out"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := errors.Is(tc.err, resources.ErrRefused); got != tc.refused {
				t.Errorf("errors.Is(%v, ErrRefused) = %v, want %v", tc.err, got, tc.refused)
			}
			if got := errors.Is(tc.err, resources.ErrAlreadyExists); got != tc.exists {
				t.Errorf("errors.Is(%v, ErrAlreadyExists) = %v, want %v", tc.err, got, tc.exists)
			}
			if got := errors.Is(tc.err, resources.ErrUnusable); got != tc.unusable {
				t.Errorf("errors.Is(%v, ErrUnusable) = %v, want %v", tc.err, got, tc.unusable)
			}
			if tc.err.Error() != tc.wantText {
				t.Errorf("text = %q, want %q", tc.err, tc.wantText)
			}
		})
	}
	var ae *resources.APIError
	if err := resources.Refused(api); !errors.As(err, &ae) || ae != api {
		t.Errorf("errors.As(Refused(%v), *APIError) = %v, want the APIError", api, ae)
	}
	if resources.Refused(nil) != nil || resources.Unusable(nil) != nil {
		t.Error("Refused(nil) or Unusable(nil) is not nil")
	}
}

func TestRefusalStatus(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]bool{400: true, 401: true, 403: true, 404: true, 412: true, 408: false, 409: false, 429: false, 500: false, 503: false, 200: false} {
		if got := resources.RefusalStatus(status); got != want {
			t.Errorf("RefusalStatus(%d) = %v, want %v", status, got, want)
		}
	}
}

func TestProgressEvents(t *testing.T) {
	t.Parallel()
	var got []resources.ProgressEvent
	ctx := resources.WithProgress(context.Background(), func(ev resources.ProgressEvent) { got = append(got, ev) })
	resources.Progress(ctx, "state %s", "CREATING")
	retry := resources.RetryInfo{Method: "POST", Path: "/20221001/endpoints", Cause: "503 Service Unavailable", Attempt: 2, Wait: 250 * time.Millisecond}
	resources.ReportRetry(ctx, retry)
	if len(got) != 2 {
		t.Fatalf("got %d events, want 2", len(got))
	}
	if got[0].Message != "state CREATING" || got[0].Retry != nil {
		t.Errorf("Progress event = %+v, want the plain message", got[0])
	}
	want := "POST /20221001/endpoints: 503 Service Unavailable; retrying in 250ms (attempt 2)"
	if got[1].Message != want || got[1].Retry == nil || *got[1].Retry != retry {
		t.Errorf("ReportRetry event = %q, %+v; want %q with the RetryInfo", got[1].Message, got[1].Retry, want)
	}
	if got[0].Node != "" || got[1].Node != "" {
		t.Errorf("events without WithNode name nodes %q and %q, want none", got[0].Node, got[1].Node)
	}
	// WithNode names the node in both kinds of event.
	got = nil
	nctx := resources.WithNode(ctx, "sentiment")
	resources.Progress(nctx, "state %s", "ACTIVE")
	resources.ReportRetry(nctx, retry)
	if len(got) != 2 || got[0].Node != "sentiment" || got[1].Node != "sentiment" {
		t.Errorf("events under WithNode(ctx, \"sentiment\") = %+v, want both naming sentiment", got)
	}
	// Without a reporter both do nothing.
	resources.Progress(context.Background(), "x")
	resources.ReportRetry(context.Background(), retry)
}

// A vendor's message may echo a value of the specs, newlines and all: the
// error is one line, and no line of the log can begin with that value.
func TestAPIErrorIsOneLine(t *testing.T) {
	t.Parallel()
	err := &resources.APIError{Service: "datadog", Status: 400, Code: "Bad\nCode", Message: "Invalid principal: 'role:x\n::error::pwned\r\nNo changes.'"}
	want := `datadog API: 400 Bad\nCode: Invalid principal: 'role:x\n::error::pwned\r\nNo changes.'`
	if got := err.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestAttrErrors(t *testing.T) {
	a := &resources.AttrError{Path: []string{"a"}, Err: errors.New("bad a")}
	b := &resources.AttrError{Path: []string{"b"}, Err: errors.New("bad b")}
	other := errors.New("read failed")
	for name, tc := range map[string]struct {
		err      error
		want     []*resources.AttrError
		wantRest error
	}{
		"nil":    {},
		"one":    {err: a, want: []*resources.AttrError{a}},
		"joined": {err: errors.Join(a, nil, errors.Join(b)), want: []*resources.AttrError{a, b}},
		"mixed":  {err: errors.Join(a, other), want: []*resources.AttrError{a}, wantRest: other},
		"other":  {err: other, wantRest: other},
	} {
		got, rest := resources.AttrErrors(tc.err)
		if !slices.Equal(got, tc.want) || (rest == nil) != (tc.wantRest == nil) || rest != nil && !errors.Is(rest, tc.wantRest) {
			t.Errorf("%s: AttrErrors(%v) = %v, %v; want %v, %v", name, tc.err, got, rest, tc.want, tc.wantRest)
		}
	}
}
