// Package benchspec writes the specs that reconcile's benchmarks load,
// plan and apply, so that every benchmark of one workload reads the same
// text.
package benchspec

import (
	"fmt"
	"strings"
)

// ChainDepth is how many resources each generated chain holds.
const ChainDepth = 10

// Policies returns a spec of n datadog:RestrictionPolicy resources, named
// ep00000, ep00001 and so on, in chains of ChainDepth: each but the first
// of its chain names the one before it in its resourceId. Each has two
// bindings, not in the order Datadog returns them, so that every plan
// has them to sort.
func Policies(n int) []byte {
	var b strings.Builder
	b.Grow(n * 320)
	b.WriteString("resources:\n")
	for i := range n {
		fmt.Fprintf(&b, "  ep%05d:\n    type: datadog:RestrictionPolicy\n    properties:\n", i)
		if i%ChainDepth == 0 {
			fmt.Fprintf(&b, "      resourceId: dashboard:c-%d\n", i)
		} else {
			fmt.Fprintf(&b, "      resourceId: dashboard:c-%d-${ep%05d.id}\n", i, i-1)
		}
		b.WriteString("      bindings:\n        - relation: viewer\n          principals: [\"role:00000000-0000-0000-0000-000000000001\"]\n")
		b.WriteString("        - relation: editor\n          principals: [\"user:64d2a3b6-8b5e-40ac-a5b7-3cdf3926b201\"]\n")
	}
	return []byte(b.String())
}
