package plan

import (
	"strconv"
	"strings"
)

// TaintRequested is what a record's Tainted holds once 'reconcile state
// taint' marked it: the object is replaced by the next apply, for no
// other reason than that it was asked for. (A create that failed puts its
// error there instead.)
const TaintRequested = "it was marked tainted with 'reconcile state taint'"

// ReasonText says in words why c's action was chosen, from its typed
// reason; "" when there is nothing to add to the action itself.
func (c *Change) ReasonText() string {
	switch c.Reason {
	case ReasonTainted:
		if c.ReasonDetail == TaintRequested {
			return TaintRequested
		}
		return "the previous create failed: " + c.ReasonDetail
	case ReasonCannotUpdate:
		return joinQuoted(c.ReplacePaths) + " cannot be updated in place"
	case ReasonReplaceOnChanges:
		return "replaceOnChanges asks for a replacement when " + joinQuoted(c.ReplacePaths) + " changes"
	case ReasonReplaceRequested:
		return "replacement requested"
	case ReasonDeletedOutside:
		return "the object was deleted outside reconcile"
	case ReasonRetainOnDelete:
		return "retainOnDelete is set: the object stays in the cloud"
	case ReasonGoneOutside:
		return "already deleted outside reconcile"
	case ReasonReadDeferred:
		return "an argument is known only after apply"
	case ReasonImportThenUpdate:
		return "then updated in place: " + joinQuoted(c.ReasonFields)
	case ReasonImportUnread:
		return "adopted on apply, then updated in place if the specs differ"
	case ReasonOptionsChanged:
		return "only its options change (" + strings.Join(c.ReasonFields, ", ") + "): nothing in the cloud changes"
	}
	return ""
}

// joinQuoted quotes each name and joins them with commas.
func joinQuoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
