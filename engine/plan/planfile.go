package plan

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/internal/jsonfast"
	"github.com/reconcile-dev/reconcile/kind"
)

// FileVersion is the format version of saved plans.
const FileVersion = 5

// maxPlanFile bounds what ReadFile accepts.
const maxPlanFile = 256 << 20

const unknownKey = "$unknown"

// File is a saved plan: the plan plus what is needed to apply exactly it
// later and to refuse it when the world moved on.
//
// A plan file is signed whole with a key of the state it was made against
// (derived from state.SecretKey, which no file or output ever holds):
// anyone who edits it, to add a delete or a replace, cannot sign it again.
// ReadFile reads it but cannot check the signature, since the state is
// named inside; Verify (which apply.CheckPlan calls too) must succeed before
// anything of it is used.
type File struct {
	Plan *Plan
	// SpecPath is the -f path the plan was made from, absolute.
	SpecPath string
	// Config holds the --config values given to plan, except those of
	// secret config entries, which must be given again to apply.
	Config map[string]string
	// Backend is where the state the plan was made against lives: the
	// absolute path of a local backend's default-stack file, or an etcd
	// URL (never with credentials); Stack is the stack.
	Backend, Stack string
	// Cloud is where the plan was made in the clouds: the emulator it was
	// made against, if any ("emulator"), and the account of each vendor
	// whose objects it reads or changes (resources.Registry.Accounts, by
	// vendor). Its apply refuses to run anywhere else (CheckCloud).
	Cloud map[string]string
	// Schemas is the schemas.Digest of the build that made the plan.
	Schemas string
	// Runs are the nodes its apply runs, when not every node of the
	// specs: ReadFileToApply leaves the values of the other no-op changes
	// undecoded.
	Runs []string
	// Cuts are the lines of the specs that its apply may load without (the
	// entries of resources it does not run); see specs.Spec.Cuts.
	Cuts []FileCuts

	body []byte // the signed bytes, as read
	mac  string // the signature, as read
	// mapped holds the memory body is in when it is not the Go heap's.
	mapped *mapped
}

// FileCuts are lines of one spec file that the apply of a plan may load
// without: specs.FileCuts, with the names a plan file gives its fields.
type FileCuts struct {
	Name   string   `json:"name"`
	Digest string   `json:"sha256"`
	Lines  [][2]int `json:"lines"`
}

// planMACKey derives the key that signs plan files from the state's key.
func planMACKey(stateKey []byte) []byte {
	m := hmac.New(sha256.New, stateKey)
	m.Write([]byte("reconcile plan file\x00"))
	return m.Sum(nil)
}

// planMAC is the signature of a plan file's body.
func planMAC(stateKey, body []byte) string {
	m := hmac.New(sha256.New, planMACKey(stateKey))
	m.Write(body)
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks that pf, as read by ReadFile, was signed with the key of
// the state it is to be applied to and is byte for byte what was signed. A
// plan file that was changed, or was made against another state, is
// refused with ErrFileChanged.
func (pf *File) Verify(stateKey []byte) error {
	defer runtime.KeepAlive(pf.mapped)
	if pf.body == nil || !hmac.Equal([]byte(pf.mac), []byte(planMAC(stateKey, pf.body))) {
		return ErrFileChanged
	}
	return nil
}

// ErrFileChanged is returned by Verify and apply.CheckPlan for a plan file
// whose signature does not match.
var ErrFileChanged = errors.New("the plan file was changed after it was made, or was made against another state: nothing of it is applied; make a new plan with 'reconcile plan --out FILE'")

// planEnvelope is the outer object of a plan file: the signature of the
// plan's bytes, and the plan.
type planEnvelope struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	MAC     string          `json:"mac"`
	Plan    json.RawMessage `json:"plan"`
}

const planFormatName = "reconcile plan"

type planFileJSON struct {
	Version   int               `json:"version"`
	Reconcile string            `json:"reconcile"`
	SpecPath  string            `json:"specPath"`
	Backend   string            `json:"backend"`
	Stack     string            `json:"stack"`
	Cloud     map[string]string `json:"cloud,omitempty"`
	Config    map[string]string `json:"config,omitempty"`
	Lineage   string            `json:"lineage"`
	Serial    int64             `json:"serial"`
	SpecHash  string            `json:"specHash"`
	Schemas   string            `json:"schemas,omitempty"`
	Destroy   bool              `json:"destroy,omitempty"`
	// RefreshOnly marks a plan made with --refresh-only.
	RefreshOnly bool `json:"refreshOnly,omitempty"`
	// Targets are the names of a targeted plan.
	Targets []string `json:"targets,omitempty"`
	// AllowSelfLockout marks a plan made with --allow-self-lockout.
	AllowSelfLockout bool `json:"allowSelfLockout,omitempty"`
	// Runs and Cuts come before the changes, for ReadFileToApply.
	Runs    []string     `json:"runs,omitempty"`
	Cuts    []FileCuts   `json:"cuts,omitempty"`
	Changes []changeJSON `json:"changes"`
	// Outputs are the plan's stack outputs, secrets sealed, unknowns
	// marked: what the plan showed of them, for 'reconcile show'.
	Outputs map[string]any `json:"outputs,omitempty"`
}

type changeJSON struct {
	Addr         string         `json:"addr"`
	Type         string         `json:"type"`
	Kind         kind.Kind      `json:"kind"`
	Action       string         `json:"action"`
	Reason       string         `json:"reason,omitempty"`
	ReasonDetail string         `json:"reasonDetail,omitempty"`
	ReasonFields []string       `json:"reasonFields,omitempty"`
	ID           string         `json:"id,omitempty"`
	ImportID     string         `json:"importId,omitempty"`
	Before       map[string]any `json:"before,omitempty"`
	After        map[string]any `json:"after,omitempty"`
	// AfterIsBefore stands for an After that is the same as Before, as
	// most are in a no-op change: it is written once.
	AfterIsBefore       bool           `json:"afterIsBefore,omitempty"`
	ReplacePaths        []string       `json:"replacePaths,omitempty"`
	DeleteBeforeReplace bool           `json:"deleteBeforeReplace,omitempty"`
	Deferred            bool           `json:"deferred,omitempty"`
	Deposed             []string       `json:"deposed,omitempty"`
	Options             []OptionChange `json:"options,omitempty"`
	Idle                bool           `json:"idle,omitempty"`
	Pos                 diag.Pos       `json:"pos"`
	// What refresh found, which the plan showed: apply ignores it.
	Drift          []fieldDriftJSON `json:"drift,omitempty"`
	DriftDetails   []string         `json:"driftDetails,omitempty"`
	DeletedOutside bool             `json:"deletedOutside,omitempty"`
	DeletedID      string           `json:"deletedId,omitempty"`
	DriftAccess    []AccessChange   `json:"driftAccess,omitempty"`
	// What the writes do to access policies, which the plan showed.
	Access   []AccessChange `json:"access,omitempty"`
	Lockouts []Lockout      `json:"lockouts,omitempty"`
}

// planFileIn is planFileJSON as ReadFile reads it: the values of changes
// are decoded apart, most by jsonfast.
type planFileIn struct {
	planFileJSON
	Changes []changeIn      `json:"changes"`
	Outputs json.RawMessage `json:"outputs,omitempty"`
}

type changeIn struct {
	changeJSON
	Before json.RawMessage `json:"before,omitempty"`
	After  json.RawMessage `json:"after,omitempty"`
	Drift  []fieldDriftIn  `json:"drift,omitempty"`
}

type fieldDriftIn struct {
	Path    string          `json:"path"`
	Applied json.RawMessage `json:"applied"`
	Live    json.RawMessage `json:"live"`
}

// decodeAny decodes a value of a plan file: its numbers checked and made
// int64 or float64, its unknown marks value.Unknown.
func decodeAny(raw json.RawMessage) (any, error) {
	if raw == nil {
		return nil, nil
	}
	v, ok := jsonfast.Decode(raw)
	if !ok {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
	}
	if err := checkNumbers(v); err != nil {
		return nil, err
	}
	return decodeValue(v), nil
}

// decodeMap decodes an object of a plan file, as decodeAny does: nil when
// absent or null.
func decodeMap(raw json.RawMessage) (map[string]any, error) {
	v, err := decodeAny(raw)
	if err != nil {
		return nil, err
	}
	switch m := v.(type) {
	case map[string]any:
		return m, nil
	case nil:
		return nil, nil
	}
	return nil, fmt.Errorf("a value is not an object")
}

type fieldDriftJSON struct {
	Path    string `json:"path"`
	Applied any    `json:"applied"`
	Live    any    `json:"live"`
}

// WriteFile encodes pf and signs it with stateKey, the key of the
// state the plan was made against. Secrets are sealed (a keyed digest,
// never the value) and unknown values marked. The plan is written one
// change at a time, as it is signed, and the signature after it, so that
// a large plan is never held encoded in memory.
func WriteFile(w io.Writer, pf File, version string, stateKey []byte) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	mac := hmac.New(sha256.New, planMACKey(stateKey))
	body := io.MultiWriter(bw, mac)
	// The plan is written compact: a plan file is read by 'reconcile
	// show', and its size is most of what reading it costs.
	head, err := json.Marshal(planFileJSON{Version: FileVersion, Reconcile: version, SpecPath: pf.SpecPath, Backend: pf.Backend, Stack: pf.Stack, Cloud: pf.Cloud, Config: pf.Config,
		Lineage: pf.Plan.Lineage, Serial: pf.Plan.Serial, SpecHash: pf.Plan.SpecHash, Schemas: pf.Schemas, Destroy: pf.Plan.Destroy, RefreshOnly: pf.Plan.RefreshOnly, Targets: pf.Plan.Targets,
		AllowSelfLockout: pf.Plan.AllowSelfLockout, Runs: pf.Runs, Cuts: pf.Cuts})
	if err != nil {
		return err
	}
	// head ends with "changes":null}; the changes and outputs follow.
	head, ok := bytes.CutSuffix(head, []byte("null}"))
	if !ok {
		return fmt.Errorf("plan file: unexpected encoding of the plan's head")
	}
	fmt.Fprintf(bw, "{\n \"format\": %q,\n \"version\": %d,\n \"plan\": ", planFormatName, FileVersion)
	body.Write(head)
	body.Write([]byte{'['})
	for i, c := range pf.Plan.Changes {
		if i > 0 {
			body.Write([]byte{','})
		}
		cj, err := encodeChange(c, stateKey)
		if err != nil {
			return err
		}
		b, err := json.Marshal(cj)
		if err != nil {
			return err
		}
		body.Write(b)
	}
	body.Write([]byte{']'})
	if len(pf.Plan.Outputs) > 0 {
		b, err := json.Marshal(encodeValues(pf.Plan.Outputs, value.Sealer{Key: stateKey}))
		if err != nil {
			return err
		}
		body.Write([]byte(`,"outputs":`))
		body.Write(b)
	}
	body.Write([]byte{'}'})
	fmt.Fprintf(bw, ",\n \"mac\": %q\n}\n", "hmac-sha256:"+hex.EncodeToString(mac.Sum(nil)))
	return bw.Flush()
}

// encodeChange is c as a plan file holds it.
func encodeChange(c Change, stateKey []byte) (changeJSON, error) {
	sl := value.Sealer{Key: stateKey, Name: c.Addr}
	before, after, err := c.Values() // decoded, when the planner packed them
	if err != nil {
		return changeJSON{}, err
	}
	cj := changeJSON{Addr: c.Addr, Type: c.Type, Kind: c.Kind, Action: c.Action.String(), Reason: c.Reason.String(),
		ReasonDetail: c.ReasonDetail, ReasonFields: c.ReasonFields,
		ID: c.ID, ImportID: c.ImportID, Before: encodeValues(before, sl), After: encodeValues(after, sl),
		ReplacePaths: c.ReplacePaths, DeleteBeforeReplace: c.DeleteBeforeReplace, Deferred: c.Deferred, Deposed: c.Deposed, Options: c.Options, Idle: c.Idle, Pos: c.Pos,
		DriftDetails: c.DriftDetails, DeletedOutside: c.DeletedOutside, DeletedID: c.DeletedID, DriftAccess: c.DriftAccess, Access: c.Access, Lockouts: c.Lockouts}
	if c.Action == NoOp && cj.Before != nil && value.Same(cj.Before, cj.After) {
		cj.After, cj.AfterIsBefore = nil, true
	}
	for _, d := range c.Drift {
		cj.Drift = append(cj.Drift, fieldDriftJSON{Path: d.Path, Applied: encodeValue(value.Seal(d.Applied, sl)), Live: encodeValue(value.Seal(d.Live, sl))})
	}
	return cj, nil
}

func encodeValues(m map[string]any, sl value.Sealer) map[string]any {
	if m == nil {
		return nil
	}
	return encodeValue(value.Seal(m, sl)).(map[string]any)
}

func encodeValue(v any) any {
	return value.Rewrite(v, func(v any) (any, bool) {
		if _, ok := v.(value.Unknown); ok {
			return map[string]any{unknownKey: true}, true
		}
		return nil, false
	})
}

func decodeValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		// Integral numbers come back as int64 however they were written
		// ("1", "1.0", "1e0"), as the state decoder does, so that a value
		// reads back the same after a round trip.
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
			return int64(f)
		}
		return f
	case []any:
		for i, e := range x {
			x[i] = decodeValue(e)
		}
		return x
	case map[string]any:
		if len(x) == 1 && x[unknownKey] == true {
			return value.Unknown{}
		}
		for k, e := range x {
			x[k] = decodeValue(e)
		}
		return x
	}
	return v // nil, a bool or a string
}

// ErrNotPlanFile is returned by ReadFile for input that is not a plan.
var ErrNotPlanFile = errors.New("not a reconcile plan file")

// ReadFile decodes a plan saved by WriteFile. It does not check the
// signature, which needs the key of the state the file names: call Verify
// before using anything of it but the paths it names.
func ReadFile(r io.Reader) (File, error) { return readFile(r, false) }

// ReadFileToApply is ReadFile for apply: the no-op changes of nodes that
// apply does not run (File.Runs) come without their values, which it
// never reads.
func ReadFileToApply(r io.Reader) (File, error) { return readFile(r, true) }

func readFile(r io.Reader, toApply bool) (File, error) {
	data, m, err := readAll(r)
	if err != nil {
		return File{}, err
	}
	if len(data) > maxPlanFile {
		return File{}, fmt.Errorf("%w: over the limit of %d bytes", ErrNotPlanFile, maxPlanFile)
	}
	env, in, fast := readFast(data, toApply)
	if !fast {
		env, in = planEnvelope{}, planFileIn{}
		if err := json.Unmarshal(data, &env); err != nil {
			return File{}, fmt.Errorf("%w: %v", ErrNotPlanFile, err)
		}
	}
	switch {
	case env.Format == "" && env.Version > 0 && env.Version < FileVersion:
		// Formats 1 and 2 had no envelope; their version is at the top.
		return File{}, fmt.Errorf("plan file format %d was written by an older reconcile, which this one (format %d) does not apply: make a new plan", env.Version, FileVersion)
	case env.Version > FileVersion:
		return File{}, fmt.Errorf("plan file format %d is newer than this reconcile understands (%d): upgrade reconcile", env.Version, FileVersion)
	case env.Format != planFormatName:
		return File{}, fmt.Errorf("%w: format %q", ErrNotPlanFile, env.Format)
	case env.Version < FileVersion:
		return File{}, fmt.Errorf("plan file format %d was written by an older reconcile, which this one (format %d) does not apply: make a new plan", env.Version, FileVersion)
	case len(env.Plan) == 0 || env.MAC == "":
		return File{}, fmt.Errorf("%w: no plan or no signature", ErrNotPlanFile)
	}
	// Every value in the plan is a json.RawMessage here, decoded by
	// decodeAny, so that Unmarshal needs no UseNumber.
	if !fast {
		if err := json.Unmarshal(env.Plan, &in); err != nil {
			return File{}, fmt.Errorf("%w: %v", ErrNotPlanFile, err)
		}
	}
	if in.Version != FileVersion || in.SpecHash == "" {
		return File{}, fmt.Errorf("%w: no version or spec hash", ErrNotPlanFile)
	}
	p := &Plan{Lineage: in.Lineage, Serial: in.Serial, SpecHash: in.SpecHash, Destroy: in.Destroy, RefreshOnly: in.RefreshOnly, Targets: in.Targets,
		AllowSelfLockout: in.AllowSelfLockout, Changes: make([]Change, 0, len(in.Changes))}
	for i, c := range in.Changes {
		act, ok := ParseAction(c.Action)
		if !ok {
			return File{}, fmt.Errorf("%w: change %d has unknown action %q", ErrNotPlanFile, i, c.Action)
		}
		if c.Addr == "" {
			return File{}, fmt.Errorf("%w: change %d has no address", ErrNotPlanFile, i)
		}
		if !c.Kind.Valid() {
			return File{}, fmt.Errorf("%w: change %d has unknown kind %q", ErrNotPlanFile, i, c.Kind)
		}
		reason, ok := ParseReason(c.Reason)
		if !ok {
			return File{}, fmt.Errorf("%w: change %d has unknown reason %q", ErrNotPlanFile, i, c.Reason)
		}
		ch := Change{Addr: c.Addr, Type: c.Type, Kind: c.Kind, Action: act, Reason: reason, ReasonDetail: c.ReasonDetail, ReasonFields: c.ReasonFields, ID: c.ID, ImportID: c.ImportID,
			ReplacePaths: c.ReplacePaths, DeleteBeforeReplace: c.DeleteBeforeReplace, Deferred: c.Deferred, Deposed: c.Deposed, Options: c.Options, Idle: c.Idle, Pos: c.Pos,
			DriftDetails: c.DriftDetails, DeletedOutside: c.DeletedOutside, DeletedID: c.DeletedID, DriftAccess: c.DriftAccess, Access: c.Access, Lockouts: c.Lockouts}
		for _, d := range c.Drift {
			applied, err := decodeAny(d.Applied)
			if err != nil {
				return File{}, fmt.Errorf("%w: change %d (%s): %v", ErrNotPlanFile, i, c.Addr, err)
			}
			live, err := decodeAny(d.Live)
			if err != nil {
				return File{}, fmt.Errorf("%w: change %d (%s): %v", ErrNotPlanFile, i, c.Addr, err)
			}
			ch.Drift = append(ch.Drift, FieldDrift{Path: d.Path, Applied: applied, Live: live})
		}
		var err error
		if ch.Before, err = decodeMap(c.Before); err != nil {
			return File{}, fmt.Errorf("%w: change %d (%s): %v", ErrNotPlanFile, i, c.Addr, err)
		}
		if ch.After, err = decodeMap(c.After); err != nil {
			return File{}, fmt.Errorf("%w: change %d (%s): %v", ErrNotPlanFile, i, c.Addr, err)
		}
		switch {
		case c.AfterIsBefore && c.After != nil:
			return File{}, fmt.Errorf("%w: change %d (%s): both after and afterIsBefore", ErrNotPlanFile, i, c.Addr)
		case c.AfterIsBefore:
			ch.After = ch.Before // read only from here on
		case ch.After == nil && act == Refresh:
			ch.DeletedOutside, ch.DeletedID = true, ch.ID // the object is gone: it leaves state
		}
		p.Changes = append(p.Changes, ch)
	}

	if p.Outputs, err = decodeMap(in.Outputs); err != nil {
		return File{}, fmt.Errorf("%w: outputs: %v", ErrNotPlanFile, err)
	}
	return File{Plan: p, SpecPath: in.SpecPath, Backend: in.Backend, Stack: in.Stack, Cloud: in.Cloud, Schemas: in.Schemas, Config: in.Config, Runs: in.Runs, Cuts: in.Cuts,
		body: []byte(env.Plan), mac: env.MAC, mapped: m}, nil
}

// Shown returns a copy of the plan of pf as renderers take it: the plan
// as it was shown when it was made. Secrets, which a plan file holds
// sealed, become value.Secret marks that hold their digest instead of
// their value, so that they show as (sensitive value), and two compare
// equal exactly when the values sealed did. The Plan of pf itself stays
// as apply needs it.
func (pf *File) Shown() *Plan {
	p := *pf.Plan
	p.Changes = make([]Change, len(pf.Plan.Changes))
	for i, c := range pf.Plan.Changes {
		c.Before = shownMap(c.Before)
		c.After = shownMap(c.After)
		c.Drift = slices.Clone(c.Drift)
		for j := range c.Drift {
			c.Drift[j].Applied = value.SealedAsSecret(c.Drift[j].Applied)
			c.Drift[j].Live = value.SealedAsSecret(c.Drift[j].Live)
		}
		p.Changes[i] = c
	}
	p.Outputs = shownMap(p.Outputs)
	return &p
}

func shownMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return value.SealedAsSecret(m).(map[string]any)
}

// checkNumbers refuses a number beyond float64's range anywhere in v, as
// decoded with UseNumber: WriteFile never writes one, and it would
// decode to an infinity that no value can hold.
func checkNumbers(v any) error {
	switch x := v.(type) {
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return nil
		}
		if f, err := x.Float64(); err != nil || math.IsInf(f, 0) {
			return fmt.Errorf("number %.40s is out of range", string(x))
		}
	case map[string]any:
		for _, e := range x {
			if err := checkNumbers(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := checkNumbers(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func ParseAction(s string) (Action, bool) {
	for i, n := range actionNames {
		if n == s {
			return Action(i), true
		}
	}
	return 0, false
}

// EmulatorKey is the key of File.Cloud naming the emulator a plan was made
// against: "builtin:DIR" for the in-process emulator keeping its data in
// DIR, or the URL of a running one.
const EmulatorKey = "emulator"

// CheckCloud refuses the apply of pf anywhere but where it was made: now
// is where the apply would run, with the emulator (EmulatorKey, absent for
// the real clouds) and the account of each vendor pf.Cloud names. The
// error says what differs and what to do.
func (pf *File) CheckCloud(now map[string]string) error {
	was, is := pf.Cloud[EmulatorKey], now[EmulatorKey]
	flag := func(e string) string {
		if dir, ok := strings.CutPrefix(e, "builtin:"); ok {
			return "--emulator (the built-in one, run from the directory holding " + dir + ")"
		}
		return "--emulator=" + e
	}
	switch {
	case was != "" && is == "":
		return fmt.Errorf("it was made against the emulator %s, and this apply would run against the real clouds: pass %s, or make a new plan", describeEmulator(was), flag(was))
	case was == "" && is != "":
		return fmt.Errorf("it was made against the real clouds, and this apply would run against the emulator %s: drop --emulator, or make a new plan against the emulator", describeEmulator(is))
	case was != is:
		return fmt.Errorf("it was made against the emulator %s, not %s: pass %s, or make a new plan", describeEmulator(was), describeEmulator(is), flag(was))
	}
	for _, vendor := range slices.Sorted(maps.Keys(pf.Cloud)) {
		if vendor == EmulatorKey || pf.Cloud[vendor] == now[vendor] {
			continue
		}
		return fmt.Errorf("it was made in the %s account %s, and this apply would run in %s: use the credentials of the account it was made in, or make a new plan",
			vendor, strconv.Quote(pf.Cloud[vendor]), strconv.Quote(now[vendor]))
	}
	return nil
}

func describeEmulator(e string) string {
	if dir, ok := strings.CutPrefix(e, "builtin:"); ok {
		return "built in, with its data in " + dir
	}
	return "at " + e
}
