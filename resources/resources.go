package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/reconcile-dev/reconcile/internal/untrusted"
)

// Attrs holds the attributes of one object, keyed by their lowerCamelCase
// field names. Values are JSON-shaped: nil, bool, string, int64 (integral
// numbers), float64, []any and map[string]any. Canon converts other Go
// values into this shape.
type Attrs map[string]any

// Sentinel errors returned by drivers.
var (
	// ErrNotFound is returned by Read, Update and Delete when the object no
	// longer exists remotely. Delete callers treat it as success.
	ErrNotFound = errors.New("not found")

	// ErrRefused is matched by an error showing that a request made
	// nothing: the API refused it (bad input, missing or bad credentials, a
	// 4xx answer other than 408, 409 and 429), or it was never sent (a
	// configuration error, inputs the driver found wrong). Drivers mark such
	// errors with Refused; an *AttrError always matches it. After a Create
	// failing so, the engine knows that no object was made.
	ErrRefused = errors.New("refused")

	// ErrAlreadyExists is matched by the *ExistsError a Create returns,
	// without writing anything, when the object it would make is already
	// there: for APIs whose create is an upsert and would silently take over
	// an object made by someone else. It matches ErrRefused too.
	ErrAlreadyExists = errors.New("already exists")

	// ErrUnusable is matched by the error a Create returns together with an
	// id when the object was made but ended unusable (an OCI endpoint ending
	// FAILED; the error says why). The engine records the object tainted,
	// to be replaced by the next apply. An id returned with an error that
	// does not match ErrUnusable means the outcome is unknown (a timeout, an
	// outage, a cancelled wait).
	ErrUnusable = errors.New("unusable")
)

// Refused returns err marked as a refusal: the result matches ErrRefused,
// and everything err matches (errors.As to an *APIError still works). Its
// text is err's. Refused(nil) is nil.
func Refused(err error) error {
	if err == nil {
		return nil
	}
	return &markedError{err: err, mark: ErrRefused}
}

// Unusable returns err marked as the failure of an object that was made but
// ended unusable: the result matches ErrUnusable, and everything err
// matches. Its text is err's. Unusable(nil) is nil.
func Unusable(err error) error {
	if err == nil {
		return nil
	}
	return &markedError{err: err, mark: ErrUnusable}
}

// markedError adds a sentinel to what an error matches without changing
// its text.
type markedError struct {
	err  error
	mark error // ErrRefused or ErrUnusable
}

func (e *markedError) Error() string        { return e.err.Error() }
func (e *markedError) Unwrap() error        { return e.err }
func (e *markedError) Is(target error) bool { return target == e.mark }

// ExistsError is returned by a Create that found the object it would make
// already there, and wrote nothing. It matches ErrAlreadyExists and
// ErrRefused.
type ExistsError struct {
	Type string // the type token, e.g. "datadog:RestrictionPolicy"
	ID   string // the id of the object found
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s %q already exists", e.Type, e.ID)
}

// Is reports whether target is ErrAlreadyExists or ErrRefused.
func (e *ExistsError) Is(target error) bool {
	return target == ErrAlreadyExists || target == ErrRefused
}

// Driver manages remote objects of one resource type.
type Driver interface {
	// Read returns the live attributes (inputs and outputs) of the object
	// with the given id, or ErrNotFound if it is gone. The map is the
	// caller's own, which the engine may change.
	Read(ctx context.Context, id string) (Attrs, error)
	// Create makes a new object from the desired inputs and waits until it is
	// usable. It returns the new id and the live attributes.
	//
	// The engine records an intent before each create; what a failed
	// Create's error matches tells it what the create made:
	//   - ErrRefused, with no id: nothing. The API refused the request or
	//     it was never sent; the engine clears the intent. An *ExistsError
	//     (the object is already there) is such a refusal.
	//   - ErrUnusable, with the id: an object that was made but ended
	//     unusable (an asynchronous create ending in a failed state). The
	//     engine records it tainted and replaces it on the next apply.
	//   - anything else, with or without an id: the outcome is unknown (a
	//     timeout, an outage, a cancelled wait). The engine keeps the intent,
	//     and the id if there is one; the next run resolves it (Recoverer).
	Create(ctx context.Context, want Attrs) (id string, got Attrs, err error)
	// Update changes the object in place from prior (the inputs last applied)
	// to want, waits until the change is done and returns the live attributes.
	Update(ctx context.Context, id string, prior, want Attrs) (Attrs, error)
	// Delete removes the object and waits until it is gone. An object that is
	// already gone is not an error: Delete returns nil or ErrNotFound.
	Delete(ctx context.Context, id string) error
}

// Function is a lookup (a Pulumi "invoke"): it reads data from a cloud API
// given arguments, and never changes anything.
type Function interface {
	// Invoke reads the result for the given arguments. The result always
	// holds an "id".
	Invoke(ctx context.Context, args Attrs) (Attrs, error)
}

// ResultComparer is optional on a Function whose results may differ in
// text while meaning the same (a set written in another order), and whose
// changes read better in the vendor's terms than as two values side by
// side. Drift detection (reconcile drift, plan --refresh) compares a
// lookup's result as last recorded with the one read now: with a
// ResultComparer, each field through EqualResultField, and the lines of
// DescribeResultChange are shown under the changed fields; without one,
// fields compare with Equal and no lines are added.
//
// A Driver may offer it too, for the drift of its objects: their inputs
// still compare under their schema after Normalize, and when some drifted,
// the lines of DescribeResultChange, given the inputs last applied and the
// live ones (both normalised, neither holding a secret), are shown under
// them. EqualResultField is not called for a driver.
//
// Both methods take results as Invoke returns them after CanonAttrs (which
// is how state records them), and must be pure and deterministic: they read
// nothing but their arguments (no call to the API, no clock, no
// environment), modify none of them, and give the same answer every time
// for the same arguments, whatever the order of map iteration. They must
// not panic on values of an unexpected shape.
type ResultComparer interface {
	// EqualResultField reports whether a and b, two values of the
	// top-level result field named field, mean the same. A field the
	// function has no rule of its own for, and a value not of the shape
	// the rule expects (missing, another type, text that does not parse),
	// compare with Equal(a, b).
	EqualResultField(field string, a, b any) bool
	// DescribeResultChange says how the result after differs from the
	// result before, in the vendor's terms: one line per changed item,
	// without a trailing newline or a leading marker, in an order that
	// depends on nothing but the values (sorted), for example
	//
	//	binding roles/viewer: -user:alice@example.com +user:bob@example.com
	//
	// It returns nil when it has nothing to add: when every field is equal
	// by EqualResultField, and when the change is one it does not describe
	// (the changed fields alone then show it).
	DescribeResultChange(before, after Attrs) []string
}

// Normalizer is optional on a Driver: it fills server-side defaults and
// canonical forms into desired inputs, so that desired and observed
// attributes compare equal when nothing really differs. Normalize returns
// a map of its own, which the engine may change, and changes neither want
// nor its values; the values it keeps may be want's.
type Normalizer interface {
	Normalize(want Attrs) Attrs
}

// NaturalID is optional on a Driver whose objects' ids follow from their
// inputs, as a Datadog restriction policy's is the resource it restricts:
// no two objects with the inputs that make the id can exist at once. A
// replacement that keeps the id (one asked for with plan --replace, or of
// a tainted object) cannot create the new object before the old one is
// deleted, so the planner deletes the old one first.
type NaturalID interface {
	// IDFor returns the id an object created from want would have, and
	// whether want determines it.
	IDFor(want Attrs) (string, bool)
}

// VendorKeys is optional on a Driver whose objects carry map entries that
// the cloud adds by itself, such as the defined tags OCI's tag defaults put
// on every new resource (Oracle-Tags.CreatedBy, Oracle-Tags.CreatedOn). An
// entry for which VendorKey reports true is never a difference when the
// specs do not set that key (nor did at the last apply): plan, drift,
// refresh and import leave it to the cloud. A key the specs do set is
// compared as usual.
type VendorKeys interface {
	// VendorKey reports whether key of the map-valued input field is one
	// the cloud may add by itself.
	VendorKey(field, key string) bool
}

// BulkReader is optional on a Driver whose API lists many objects in one
// call, with every field of Read's attributes that refresh compares (the
// inputs). Refresh (plan, plan --refresh-only, drift) hands ReadMany every
// object of the driver's type that state records, before it reads them,
// and then reads with Read only those ReadMany did not return: a refresh
// of thousands of objects costs a few list calls instead of one call per
// object.
//
// The engine keeps the semantics of Read: an object ReadMany does not
// return is read with Read, which alone decides that an object is gone
// (ErrNotFound); attributes from ReadMany that differ from what was last
// applied (drift) are read again with Read before they are reported or
// recorded, so that what refresh records of an object that changed is
// complete; ReadMany's errors are never reported, the objects are read
// one by one instead.
type BulkReader interface {
	// ReadMany reads in bulk the objects objs names and returns, by id,
	// the live attributes of those it found: as Read would return them,
	// but without the output-only fields BulkOmitted names, which the
	// engine fills from what state records. It leaves out every object it
	// did not find, or cannot vouch for (one that reads as deleted, or
	// that the API may list elsewhere than where it looked), and may leave
	// out any: those are read with Read. It makes at most about as many
	// calls as parallelism calls at once would take to read the objects
	// one by one, so that a refresh is never much slower with it than
	// without it. It returns an error only when ctx ends.
	ReadMany(ctx context.Context, objs []BulkObject, parallelism int) (map[string]Attrs, error)
	// BulkOmitted names the output-only fields that ReadMany's attributes
	// lack because the API's list does not return them (an OCI endpoint's
	// timeUpdated). The engine keeps the values state records for them,
	// until the object is next read with Read.
	BulkOmitted() []string
}

// BulkObject is an object that ReadMany is asked for: its id, and its
// attributes as state records them (the inputs last applied and the
// outputs last read), from which the driver learns where to list it (an
// OCI endpoint's compartment). Secret inputs are sealed digests, and the
// attributes may be out of date: they are hints, not facts.
type BulkObject struct {
	ID    string
	Attrs Attrs
}

// Recoverer is optional on a Driver: it finds what a Create made when the
// process running it died (or was stopped) before it could record the
// result. Before every create the engine durably records an intent (the
// node, its type, the idempotency token of the create and its inputs); the
// next run calls Recover for each intent left behind, before it plans, and
// adopts what Recover finds into state, so that an interrupted create never
// leaves an object nobody manages, and is never made twice.
type Recoverer interface {
	// Recover looks for the object that a Create with req.Token and
	// req.Want made, without making a new one where the API allows it. It
	// returns, as Create does, the object's id and live attributes; an id
	// with an error matching ErrUnusable when the object exists but ended
	// unusable (the engine records it tainted); an id with another error
	// when the object exists but how its create ends is still unknown (the
	// engine records it and keeps the intent). An empty id with a nil error
	// means the create made nothing: the engine forgets the intent and the
	// next plan creates the object. An error without an id means Recover
	// could not tell, whatever else the error matches (a refusal of the
	// lookup says nothing of the create): the engine keeps the intent and
	// reports the error, and no new create of that node is made while the
	// question is open. An object found that the create would not have
	// made (someone else's) is never returned as its result.
	//
	// Where an API finds objects only by replaying the create with its
	// idempotency token, as OCI's opc-retry-token does, Recover may replay
	// it: if the first create never reached the API, the replay makes the
	// object now, which is what the interrupted apply was asked to do.
	Recover(ctx context.Context, req RecoverRequest) (id string, got Attrs, err error)
}

// RecoverRequest describes an interrupted create to Recover.
type RecoverRequest struct {
	// Token is the idempotency token the create was sent with (see
	// WithIdempotencyToken).
	Token string
	// Want holds the inputs the create was given, except the secret ones:
	// state never holds a secret value, so those are missing from Want and
	// named in Hidden. A driver that needs them to recover (a replay must
	// send the same body) returns an error saying so.
	Want Attrs
	// Hidden names the top-level inputs that held a secret, sorted.
	Hidden []string
	// Time is when the create was started.
	Time time.Time
}

// Registry maps canonical type tokens to the driver or function serving them.
type Registry struct {
	Drivers   map[string]Driver
	Functions map[string]Function
	// Accounts name the account each vendor's drivers and functions act
	// in, keyed by the vendor of the type tokens ("oci", "gcp",
	// "datadog": see Vendor). A saved plan records those of the vendors
	// it touches, and its apply refuses to run in other accounts.
	Accounts map[string]Account
}

// Account returns a description of the account a vendor's calls act in:
// who calls, in which tenancy, org or region, as far as it decides where
// objects are. It may make a request (Datadog's current user, Google's
// tokeninfo) but never returns a credential.
type Account func(ctx context.Context) (string, error)

// Vendor returns the vendor of a type token, the part before its first
// colon: "oci" for oci:AiLanguage:Endpoint.
func Vendor(token string) string {
	v, _, _ := strings.Cut(token, ":")
	return v
}

// AttrError reports a problem with one input attribute. Path is a list of
// field names and list indexes (as strings) from the top of the inputs, for
// example []string{"bindings", "0", "relation"}. The engine turns the path
// into a position in the user's spec. Drivers find bad inputs before they
// send anything, so an AttrError matches ErrRefused.
type AttrError struct {
	Path []string
	Err  error
}

func (e *AttrError) Error() string {
	return fmt.Sprintf("%s: %v", strings.Join(e.Path, "."), e.Err)
}

func (e *AttrError) Unwrap() error { return e.Err }

// Is reports whether target is ErrRefused.
func (e *AttrError) Is(target error) bool { return target == ErrRefused }

// APIError is a failed call to a vendor API, carrying the vendor's own status
// and error code so that the user sees what the API said.
type APIError struct {
	Service string // "oci", "gcp" or "datadog"
	Status  int    // HTTP status
	Code    string // vendor error code, e.g. "NotAuthorizedOrNotFound", "PERMISSION_DENIED"
	Message string // vendor message, as the API wrote it
}

// Error is one line: the vendor's code and message, which may echo a value
// of the specs, newlines and all, are escaped (untrusted.Text).
func (e *APIError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("%s API: %d %s: %s", e.Service, e.Status, untrusted.Text(e.Code), untrusted.Text(e.Message))
	}
	return fmt.Sprintf("%s API: %d: %s", e.Service, e.Status, untrusted.Text(e.Message))
}

// RefusalStatus reports whether an HTTP status answering a request shows
// that the API refused it and did nothing: a 4xx other than 408 Request
// Timeout, 409 Conflict and 429 Too Many Requests, which leave open what
// was done or ask to come back later. Drivers mark such failures with
// Refused.
func RefusalStatus(status int) bool {
	switch status {
	case 408, 409, 429: // Request Timeout, Conflict, Too Many Requests
		return false
	}
	return status >= 400 && status < 500
}

type ctxKey int

const (
	progressKey ctxKey = iota
	tokenKey
	nodeKey
	fenceKey
)

// WithFence returns a context whose calls to the cloud are fenced by held:
// every request made with it, each attempt of a retried request and each
// step of a read-modify-write alike, is sent only if held returns nil
// just before it leaves; otherwise the request fails with held's error
// and nothing is sent. The engine installs it around each operation that
// changes the cloud, with the check that the state's lock is still this
// run's, so that a run that lost its lock (frozen past its lease, cut off
// from the state's server) sends nothing more once another run may hold
// it. held must be cheap and safe for concurrent use.
func WithFence(ctx context.Context, held func() error) context.Context {
	return context.WithValue(ctx, fenceKey, held)
}

// CheckFence returns the error of the fence installed by WithFence, nil
// when the fence holds or there is none. Whatever sends a request to the
// cloud calls it right before each send (httpretry.Transport does).
func CheckFence(ctx context.Context) error {
	if held, ok := ctx.Value(fenceKey).(func() error); ok && held != nil {
		return held()
	}
	return nil
}

// ProgressEvent is one report of a running operation, as WithProgress's
// function receives it.
type ProgressEvent struct {
	// Message is the text to show: what Progress was given, or for a retry
	// RetryInfo.String.
	Message string
	// Retry is set when the event reports that a call is retried (see
	// ReportRetry), nil otherwise.
	Retry *RetryInfo
	// Node is the node of the specs the call was made for, as WithNode
	// named it; "" when the engine named none (a list of many objects).
	Node string
}

// RetryInfo describes one retry of a failed call.
type RetryInfo struct {
	Method, Path string        // the request retried, e.g. "POST", "/20221001/endpoints"
	Cause        string        // why: "503 Service Unavailable", "connection error: ..."
	Attempt      int           // the number of the attempt about to be made: 2 for the first retry
	Wait         time.Duration // the pause before it
}

// String returns the message of a retry event, such as
// "POST /20221001/endpoints: 503 Service Unavailable; retrying in 250ms (attempt 2)".
func (r RetryInfo) String() string {
	return fmt.Sprintf("%s %s: %s; retrying in %s (attempt %d)", r.Method, r.Path, r.Cause, r.Wait.Round(time.Millisecond), r.Attempt)
}

// WithProgress returns a context whose Progress and ReportRetry calls go to
// fn. The engine installs it around each driver call; fn must be safe for
// concurrent use.
func WithProgress(ctx context.Context, fn func(ProgressEvent)) context.Context {
	return context.WithValue(ctx, progressKey, fn)
}

// WithNode returns a context whose Progress and ReportRetry calls name the
// node of the specs (a resource, get or lookup) that the calls made with
// it are for, so that a reporter outside an operation (a plan's refresh)
// can say whose call is retried.
func WithNode(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, nodeKey, name)
}

// Progress reports what a long operation is waiting for ("state CREATING,
// work request 40% complete"). It does nothing when no reporter is installed.
func Progress(ctx context.Context, format string, args ...any) {
	if fn, ok := ctx.Value(progressKey).(func(ProgressEvent)); ok && fn != nil {
		node, _ := ctx.Value(nodeKey).(string)
		fn(ProgressEvent{Message: fmt.Sprintf(format, args...), Node: node})
	}
}

// ReportRetry reports that a call failed and is retried after r.Wait. It
// does nothing when no reporter is installed.
func ReportRetry(ctx context.Context, r RetryInfo) {
	if fn, ok := ctx.Value(progressKey).(func(ProgressEvent)); ok && fn != nil {
		node, _ := ctx.Value(nodeKey).(string)
		fn(ProgressEvent{Message: r.String(), Retry: &r, Node: node})
	}
}

// WithIdempotencyToken returns a context carrying the token a Create must
// send to its API (OCI's opc-retry-token) so that a repeated create, after a
// crash or a retry, returns the first object instead of making another.
func WithIdempotencyToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey, token)
}

// IdempotencyToken returns the token installed by WithIdempotencyToken, or "".
func IdempotencyToken(ctx context.Context) string {
	s, _ := ctx.Value(tokenKey).(string)
	return s
}
