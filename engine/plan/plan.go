package plan

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/reconcile-dev/reconcile/engine/diag"
	"github.com/reconcile-dev/reconcile/engine/value"
	"github.com/reconcile-dev/reconcile/kind"
)

// Action is what apply does to one node.
type Action int

// Actions, in the order a summary lists them.
const (
	NoOp    Action = iota
	Create         // +   a new object
	Update         // ~   change in place
	Replace        // -/+ (or +/- when the new object is created first)
	Delete         // -   in state, gone from the specs
	Read           // <=  a lookup or a get: read, never changed
	Import         // <=  adopt an existing object into state (options.import)
	Forget         // -   drop from state without deleting (retainOnDelete)
	// Refresh accepts the cloud's values into state, changing nothing in
	// the cloud: the one action of a refresh-only plan, for a node that
	// changed (or was deleted) outside reconcile since the last apply.
	Refresh // ~ (or - when the object is gone: it is removed from state)

	// NumActions is the number of actions: every Action is below it.
	NumActions int = iota
)

var actionNames = [NumActions]string{"no-op", "create", "update", "replace", "delete", "read", "import", "forget", "refresh"}

func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "unknown"
}

// Symbol is the one- to three-character sign renderers put before a node.
func (a Action) Symbol() string {
	switch a {
	case Create:
		return "+"
	case Update:
		return "~"
	case Replace:
		return "-/+"
	case Delete, Forget:
		return "-"
	case Read:
		return "<="
	case Import:
		return "<="
	case Refresh:
		return "~"
	}
	return " "
}

// Reason says why the planner chose a change's action, as data: the
// renderers derive their words from it, and plan JSON exposes it as
// action_reason.
type Reason int

// Reasons. The zero value says nothing beyond the action itself.
const (
	ReasonNone Reason = iota
	// ReasonTainted: replace, because the previous create failed
	// (ReasonDetail says why), or because the object was marked tainted
	// with 'reconcile state taint' (ReasonDetail is TaintRequested).
	ReasonTainted
	// ReasonCannotUpdate: replace, because a field that cannot change in
	// place changed (ReplacePaths).
	ReasonCannotUpdate
	// ReasonReplaceOnChanges: replace, because the resource's
	// replaceOnChanges option names a field that changed (ReplacePaths).
	ReasonReplaceOnChanges
	// ReasonDeletedOutside: create, because the object was deleted outside
	// reconcile since the last apply.
	ReasonDeletedOutside
	// ReasonRetainOnDelete: forget, because retainOnDelete keeps the
	// object in the cloud.
	ReasonRetainOnDelete
	// ReasonGoneOutside: forget, because the object to delete was already
	// deleted outside reconcile.
	ReasonGoneOutside
	// ReasonReadDeferred: read during apply, because an argument is known
	// only then.
	ReasonReadDeferred
	// ReasonImportThenUpdate: import, then update in place the fields
	// that differ from the specs (ReasonFields).
	ReasonImportThenUpdate
	// ReasonImportUnread: import of an object the plan did not read
	// (--refresh=false): it is updated on apply if it differs.
	ReasonImportUnread
	// ReasonOptionsChanged: update of the resource's options only
	// (ReasonFields: protect, retainOnDelete, deleteBeforeReplace), which
	// changes state and nothing in the cloud.
	ReasonOptionsChanged
	// ReasonNotDeclared: delete, because the specs no longer declare it.
	ReasonNotDeclared
	// ReasonDestroy: delete, because the plan destroys everything.
	ReasonDestroy
	// ReasonReplaceRequested: replace, because the user asked for it
	// (plan --replace NAME).
	ReasonReplaceRequested
)

var reasonNames = [...]string{
	"", "replace_because_tainted", "replace_because_cannot_update", "replace_because_replace_on_changes",
	"create_because_deleted_outside", "forget_because_retain_on_delete", "forget_because_deleted_outside",
	"read_because_dependency_pending", "import_then_update", "import_not_read", "update_because_options_changed",
	"delete_because_not_declared", "delete_because_destroy", "replace_by_request",
}

// String is the reason's name in plan JSON and plan files: "" for
// ReasonNone, else snake_case such as "replace_because_tainted".
func (r Reason) String() string {
	if r >= 0 && int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "unknown"
}

// ParseReason is the inverse of Reason.String.
func ParseReason(s string) (Reason, bool) {
	for i, n := range reasonNames {
		if n == s {
			return Reason(i), true
		}
	}
	return 0, false
}

// Change is the planned action for one node.
type Change struct {
	Addr   string // the node's name in the specs (or in state, for deletes)
	Type   string // canonical type token
	Kind   kind.Kind
	Action Action
	// Reason says why the action was chosen; renderers derive their words
	// from it, and apply reads it only to tell an Update of options alone
	// (ReasonOptionsChanged), which makes no cloud call. ReasonDetail
	// carries what the reason needs beyond the change's other fields (why
	// the previous create failed), ReasonFields the fields it is about
	// (those an import then updates, or whose options changed).
	Reason       Reason
	ReasonDetail string
	ReasonFields []string
	// ID is the object's current id, if it has one.
	ID string
	// ImportID is the id to adopt, for Import.
	ImportID string
	// Before holds the last applied attributes (inputs and outputs), nil for
	// a create. After holds the desired inputs, with Unknown and Secret
	// values where they apply, and for reads the result when it is known.
	Before, After map[string]any
	// ReplacePaths names the top-level fields whose change forces the
	// replacement, sorted.
	ReplacePaths []string
	// DeleteBeforeReplace is set when the old object goes first.
	DeleteBeforeReplace bool
	// Deferred is set on a lookup whose arguments are not known until apply.
	Deferred bool
	// Pos is where the node is declared (zero for deletes).
	Pos diag.Pos

	// What refresh found changed outside reconcile since the last apply.
	// Renderers show it apart from the changes the specs ask for; apply
	// never uses it.
	//
	// Drift lists the fields whose live value differs from the one last
	// applied (for a lookup or a get: the results that differ from those
	// last read), sorted by path.
	Drift []FieldDrift
	// DriftDetails are extra lines about the drift, such as the members
	// added to and removed from each role of an IAM policy.
	DriftDetails []string
	// DeletedOutside is set when refresh found the object deleted outside
	// reconcile; DeletedID is the id it had.
	DeletedOutside bool
	DeletedID      string
	// Deposed are ids of objects an earlier replacement left behind because
	// their delete failed; apply deletes them after the node's own action.
	Deposed []string
	// Options lists the resource options that change with this apply
	// (protect, retainOnDelete, deleteBeforeReplace), sorted by name. They
	// live in state, not in the cloud.
	Options []OptionChange
	// Idle is set on a no-op change of a resource whose record apply
	// would write again unchanged (see planner): apply runs it only when
	// something it runs, or a stack output, reads it.
	Idle bool

	// What the change's writes do to access policies (IAM policies,
	// restriction policies), against the live policies read at plan time:
	// the members they remove and add, sorted (SortAccess), and the
	// caller's own memberships they remove, which the plan let through
	// (Plan.AllowSelfLockout). Nil when the change writes no access
	// policy, or what it writes is known only at apply. Renderers show
	// them; apply does not read them.
	Access   []AccessChange
	Lockouts []Lockout
	// DriftAccess lists the members refresh found added to and removed
	// from an access policy outside reconcile since the last apply,
	// sorted (SortAccess): the drift's fields, member by member.
	DriftAccess []AccessChange

	// packedBefore and packedAfter hold Before and After, encoded,
	// between Pack and Unpack; nil when not packed.
	packedBefore, packedAfter []byte
	// keptInputs holds, packed, the inputs the planner evaluated for the
	// apply that follows it (KeepInputs); nil when none were kept.
	keptInputs []byte
}

// KeepInputs keeps inputs, the resource's inputs as the planner evaluated
// them, packed (see value.Packer), for an apply of the plan in the same
// process, with the same specs, to send as they are (KeptInputs) rather
// than evaluate its inputs expression again. It reports false, keeping
// nothing, for inputs that do not pack (a secret among them).
func (c *Change) KeepInputs(p *value.Packer, inputs map[string]any) bool {
	b, ok := p.Pack(inputs)
	if ok {
		c.keptInputs = b
	}
	return ok
}

// KeptInputs returns the inputs KeepInputs kept, decoded anew, and
// whether it kept any.
func (c *Change) KeptInputs() (map[string]any, bool, error) {
	if c.keptInputs == nil {
		return nil, false, nil
	}
	m, err := value.Unpack(c.keptInputs)
	if err != nil {
		return nil, true, fmt.Errorf("the inputs planned for %q: %w", c.Addr, err)
	}
	return m, true, nil
}

// LetValuesGo lets go of the change's planned values, Before, After and
// the inputs kept, for an apply done with them.
func (c *Change) LetValuesGo() {
	c.Before, c.After, c.packedBefore, c.packedAfter, c.keptInputs = nil, nil, nil, nil, nil
}

// Pack keeps Before and After encoded (see value.Packer) until Unpack, in
// a fraction of the memory of the maps they hold, when they hold plain
// values only; they are nil meanwhile, and Values decodes them for a
// reader. After is packed over the inputs kept (KeepInputs), and Before
// over After (value.PackOver): what they share is held once. A large plan
// so holds the values of the changes waiting to be shown, saved or
// applied compactly. It reports whether it packed.
func (c *Change) Pack(p *value.Packer) bool {
	if c.packed() || c.Before == nil && c.After == nil {
		return false
	}
	inputs, _, err := c.KeptInputs()
	if err != nil {
		return false
	}
	after, ok := packOver(p, c.After, inputs)
	if !ok {
		return false
	}
	before, ok := packOver(p, c.Before, c.After)
	if !ok {
		return false
	}
	c.Before, c.After, c.packedBefore, c.packedAfter = nil, nil, before, after
	return true
}

// packed reports whether Pack packed the change's values.
func (c *Change) packed() bool { return c.packedBefore != nil || c.packedAfter != nil }

// packOver packs m over base; nil, and true, for no map.
func packOver(p *value.Packer, m, base map[string]any) ([]byte, bool) {
	if m == nil {
		return nil, true
	}
	return p.PackOver(m, base)
}

// unpackOver decodes what packOver made.
func unpackOver(b []byte, base map[string]any) (map[string]any, error) {
	if b == nil {
		return nil, nil
	}
	return value.UnpackOver(b, base)
}

// Values returns Before and After, decoded for the caller when Pack
// packed them (the change stays packed). Readers that look at a change
// once, such as renderers and the plan file's writer, read its values so.
func (c *Change) Values() (before, after map[string]any, err error) {
	if !c.packed() {
		return c.Before, c.After, nil
	}
	inputs, _, err := c.KeptInputs()
	if err == nil {
		if after, err = unpackOver(c.packedAfter, inputs); err == nil {
			before, err = unpackOver(c.packedBefore, after)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("the planned values of %q: %w", c.Addr, err)
	}
	return before, after, nil
}

// Unpack restores the values that Pack packed.
func (c *Change) Unpack() error {
	before, after, err := c.Values()
	if err != nil {
		return err
	}
	c.Before, c.After, c.packedBefore, c.packedAfter = before, after, nil, nil
	return nil
}

// OptionChange is one resource option that changes.
type OptionChange struct {
	Name   string `json:"name"`
	Before bool   `json:"before"`
	After  bool   `json:"after"`
}

// Drifted reports whether refresh found c changed or deleted outside
// reconcile.
func (c *Change) Drifted() bool {
	return c.DeletedOutside || len(c.Drift) > 0 || len(c.DriftDetails) > 0 || len(c.DriftAccess) > 0
}

// Removed counts the members c's writes remove from access policies.
func (c *Change) Removed() int {
	n := 0
	for _, a := range c.Access {
		if !a.Added {
			n++
		}
	}
	return n
}

// AccessChange is one member that a write adds to or removes from a role
// of an access policy (an IAM policy, a Datadog restriction policy), or
// that was added or removed outside reconcile.
type AccessChange struct {
	// Resource names what the policy governs, such as
	// "services/orders.endpoints.acme-prod.cloud.goog" or
	// "dashboard:abc-def-ghi".
	Resource string `json:"resource"`
	// Role is the IAM role or the Datadog relation.
	Role string `json:"role"`
	// Condition is the title of the binding's IAM condition, "" for none.
	Condition string `json:"condition,omitempty"`
	// Member is the IAM member or the Datadog principal.
	Member string `json:"member"`
	// Added is true for a member added, false for one removed.
	Added bool `json:"added,omitempty"`
}

// Lockout is a membership of the caller's own that a write removes: the
// caller (who reconcile calls the API as) has Role on Resource through
// Member now, and would not after the write.
type Lockout struct {
	Resource string `json:"resource"`
	Role     string `json:"role"`
	Caller   string `json:"caller"`
	Member   string `json:"member"`
}

// SortAccess sorts changes by resource, role and condition, members
// removed before members added, then by member.
func SortAccess(changes []AccessChange) {
	slices.SortFunc(changes, func(a, b AccessChange) int {
		return cmp.Or(cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Role, b.Role), cmp.Compare(a.Condition, b.Condition),
			compareAdded(a.Added, b.Added), cmp.Compare(a.Member, b.Member))
	})
}

// compareAdded orders a member removed before one added.
func compareAdded(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// Plan is the ordered list of changes that apply would make, in dependency
// order then by address; deletes come after, in reverse dependency order.
type Plan struct {
	Changes []Change
	// Outputs are the stack outputs as far as they are known.
	Outputs map[string]any
	// Lineage and Serial identify the state the plan was made against.
	Lineage string
	Serial  int64
	// SpecHash is a digest of the specs and config the plan was made from.
	SpecHash string
	// Destroy is set on a plan that deletes every managed resource.
	Destroy bool
	// RefreshOnly is set on a plan that only accepts the cloud's values
	// into state (plan --refresh-only): its changes are Refresh or NoOp,
	// one per node in state, sorted by address.
	RefreshOnly bool
	// Targets, when not empty, are the names a targeted plan (--target)
	// was limited to, sorted: it has changes only for them and what they
	// depend on (for a Destroy, what depends on them), and apply runs
	// only those nodes.
	Targets []string
	// AllowSelfLockout is set on a plan made with --allow-self-lockout:
	// its writes may remove the caller's own access (Change.Lockouts),
	// and its apply lets them.
	AllowSelfLockout bool
}

// HasDrift reports whether refresh found any node changed or deleted
// outside reconcile.
func (p *Plan) HasDrift() bool {
	for i := range p.Changes {
		if p.Changes[i].Drifted() {
			return true
		}
	}
	return false
}

// HasChanges reports whether applying the plan would change anything
// (reads alone are not changes; accepting the cloud's values into state
// is one).
func (p *Plan) HasChanges() bool {
	for _, c := range p.Changes {
		if len(c.Deposed) > 0 {
			return true
		}
		switch c.Action {
		case NoOp, Read:
		default:
			return true
		}
	}
	return false
}

// FieldDrift is one field whose live value differs from the applied one.
type FieldDrift struct {
	Path    string
	Applied any // as last applied (a Secret when it is secret)
	Live    any // as the cloud has it now (a Secret when it is secret)
}
