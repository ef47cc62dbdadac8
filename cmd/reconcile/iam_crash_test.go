package main

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

// Shape of the IAM crash specs: members of one consumer policy (writing
// one policy, one after the other), bindings of distinct roles of one
// service's policy, and the whole policy of another service.
const (
	crashMembers  = 8
	crashBindings = 6
)

func crashIamSpec(prefix string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `variables:
  access:
    fn::invoke:
      function: gcp:organizations:getIAMPolicy
      arguments:
        bindings:
          - role: roles/servicemanagement.serviceConsumer
            members: [user:%s@acme.example]
resources:
  policy:
    type: gcp:endpoints:ServiceIamPolicy
    properties:
      serviceName: orders.endpoints.acme-prod.cloud.goog
      policyData: ${access.policyData}
`, prefix)
	for i := range crashMembers {
		fmt.Fprintf(&b, `  member%02d:
    type: gcp:endpoints:ConsumersIamMember
    properties:
      serviceName: orders.endpoints.acme-prod.cloud.goog
      consumerProject: %s
      role: roles/servicemanagement.serviceConsumer
      member: user:m%02d@acme.example
`, i, prefix, i)
	}
	for i := range crashBindings {
		fmt.Fprintf(&b, `  binding%02d:
    type: gcp:endpoints:ServiceIamBinding
    properties:
      serviceName: inventory.endpoints.acme-prod.cloud.goog
      role: roles/custom.%s-%02d
      members: [user:b%02d@acme.example, group:g%02d@acme.example]
`, i, prefix, i, i, i)
	}
	return b.String()
}

// checkIamConverged checks that the emulator holds exactly what the IAM
// crash spec declares, and state names each of it once.
func checkIamConverged(t *testing.T, e *emu, w *ws, prefix string) {
	t.Helper()
	const consumerRole = "roles/servicemanagement.serviceConsumer"
	consumer := "services/orders.endpoints.acme-prod.cloud.goog/consumers/" + prefix
	c := e.iamPolicy(consumer)
	var want []string
	for i := range crashMembers {
		want = append(want, fmt.Sprintf("user:m%02d@acme.example", i))
	}
	if got := c.members(consumerRole); !slices.Equal(got, want) || len(c.Bindings) != 1 {
		t.Errorf("policy of %s = %+v, want the %d members once each", consumer, c, crashMembers)
	}
	inv := e.iamPolicy("services/inventory.endpoints.acme-prod.cloud.goog")
	for i := range crashBindings {
		role := fmt.Sprintf("roles/custom.%s-%02d", prefix, i)
		want := []string{fmt.Sprintf("group:g%02d@acme.example", i), fmt.Sprintf("user:b%02d@acme.example", i)}
		if got := inv.members(role); !slices.Equal(got, want) {
			t.Errorf("members of %s = %v, want %v", role, got, want)
		}
	}
	o := e.iamPolicy("services/orders.endpoints.acme-prod.cloud.goog")
	if got := o.members(consumerRole); len(o.Bindings) != 1 || !slices.Equal(got, []string{"user:" + prefix + "@acme.example"}) {
		t.Errorf("policy of orders = %+v, want the spec's alone", o)
	}
	st := w.stateList()
	if st["policy"].ID != "services/orders.endpoints.acme-prod.cloud.goog" {
		t.Errorf("state: policy = %+v", st["policy"])
	}
	delete(st, "policy")
	delete(st, "access")
	for i := range crashMembers {
		node := fmt.Sprintf("member%02d", i)
		if want := consumer + " " + consumerRole + fmt.Sprintf(" user:m%02d@acme.example", i); st[node].ID != want {
			t.Errorf("state: %s = %q, want %q", node, st[node].ID, want)
		}
		delete(st, node)
	}
	for i := range crashBindings {
		node := fmt.Sprintf("binding%02d", i)
		if want := fmt.Sprintf("services/inventory.endpoints.acme-prod.cloud.goog roles/custom.%s-%02d", prefix, i); st[node].ID != want {
			t.Errorf("state: %s = %q, want %q", node, st[node].ID, want)
		}
		delete(st, node)
	}
	for name, ent := range st {
		t.Errorf("state holds undeclared %s = %+v", name, ent)
	}
	if ins := w.stateIntents(); len(ins) != 0 {
		t.Errorf("intents left after a complete apply: %+v", ins)
	}
}

// TestCrashSIGKILLIam kills applies of IAM members, bindings and a policy
// with SIGKILL at random moments, with writes in flight: the next apply
// resolves the interrupted writes (an IAM write is an idempotent set
// operation, adopted when it landed and made again when it did not), and
// the policies then hold exactly what the specs declare, each grant once;
// destroy then takes every grant away.
func TestCrashSIGKILLIam(t *testing.T) {
	needBinary(t)
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	t.Parallel()
	n := trialCount(t, 8)
	var killedWithIntents atomic.Int32
	var mu sync.Mutex
	outcomes := map[string]int{}
	runTrials(t, n, 2, server.Settings{LatencyMS: 40}, func(t *testing.T, e *emu, _ string, i int, rng *rand.Rand) {
		w := newWS(t, e)
		prefix := fmt.Sprintf("iam%02d-%d", i, rng.IntN(1e6))
		w.write("main.yaml", crashIamSpec(prefix))
		k := 1 + rng.IntN(1+crashMembers+crashBindings)
		p := w.startProc(nil, "apply", "--auto-approve")
		p.waitFor(&p.out, ": Creating...", k)
		// A write takes two calls of 40ms, writes of one policy wait their
		// turn: a random pause lets some land before the kill, unrecorded.
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		killed := p.signal(syscall.SIGKILL)
		r := p.wait(30 * time.Second)
		if killed && p.signaled != syscall.SIGKILL {
			killed = false
		}
		if !killed && r.code != 0 {
			t.Fatalf("the first apply failed without being killed:\n%s", r)
		}
		pending := len(w.stateIntents())
		if pending > 0 {
			killedWithIntents.Add(1)
		}
		t.Logf("kill after create %d started: killed %v, %d intents pending", k, killed, pending)
		r = w.must(0, "apply", "--auto-approve")
		if pending > 0 && !strings.Contains(r.stdout, "Resolving") {
			t.Errorf("%d intents were pending but the apply did not resolve them:\n%s", pending, r)
		}
		mu.Lock()
		for k, v := range resolveOutcomes(r.stdout + r.stderr) {
			outcomes[k] += v
		}
		mu.Unlock()
		checkIamConverged(t, e, w, prefix)
		w.must(0, "plan", "--detailed-exitcode")
		w.must(0, "destroy", "--auto-approve")
		c := e.iamPolicy("services/orders.endpoints.acme-prod.cloud.goog/consumers/" + prefix)
		inv := e.iamPolicy("services/inventory.endpoints.acme-prod.cloud.goog")
		for _, b := range append(c.Bindings, inv.Bindings...) {
			if strings.Contains(b.Role, prefix) || b.Role == "roles/servicemanagement.serviceConsumer" {
				t.Errorf("destroy left a grant: %+v", b)
			}
		}
	})
	t.Logf("%d of %d trials were killed with IAM writes in flight; resolved: %v", killedWithIntents.Load(), n, outcomes)
}
