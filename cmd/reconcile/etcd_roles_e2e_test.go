package main

// State on etcd with authentication on, as the CI guide sets it up: a plan
// user that may only read the stacks, an apply user that may write them.

import (
	"encoding/json"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
)

// etcdRoles are the users of a cluster set up by setUpEtcdRoles, and the
// root client that set it up.
type etcdRoles struct {
	root                        *clientv3.Client
	planUser, applyUser         string // ETCDCTL_USER values, name:password
	planPassword, applyPassword string
}

// setUpEtcdRoles turns authentication on in the cluster at endpoints and
// creates the users of the CI guide, for the stacks under prefix: the
// root user, the plan user (role reconcile-plan: read on PREFIX/) and the
// apply user (role reconcile-apply: readwrite on PREFIX/). Each step is
// the etcd API call of the etcdctl command in its comment: those of the
// guide, in its order.
func setUpEtcdRoles(t *testing.T, endpoints []string, prefix string) *etcdRoles {
	t.Helper()
	const (
		rootPassword  = "pw-root-Yb27-never-shown"
		planPassword  = "pw-plan-Qm40-never-shown"
		applyPassword = "pw-apply-Hc65-never-shown"
	)
	admin, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx := t.Context()
	// etcdctl --prefix=true grants the range [key, the key after every
	// key that starts with it).
	under := prefix + "/"
	end := clientv3.GetPrefixRangeEnd(under)
	for _, step := range []struct {
		etcdctl string
		do      func() error
	}{
		{"role add root", func() error { _, err := admin.RoleAdd(ctx, "root"); return err }},
		{"user add root", func() error { _, err := admin.UserAdd(ctx, "root", rootPassword); return err }},
		{"user grant-role root root", func() error { _, err := admin.UserGrantRole(ctx, "root", "root"); return err }},
		{"role add reconcile-plan", func() error { _, err := admin.RoleAdd(ctx, "reconcile-plan"); return err }},
		{"role grant-permission reconcile-plan --prefix=true read " + under, func() error {
			_, err := admin.RoleGrantPermission(ctx, "reconcile-plan", under, end, clientv3.PermissionType(clientv3.PermRead))
			return err
		}},
		{"role add reconcile-apply", func() error { _, err := admin.RoleAdd(ctx, "reconcile-apply"); return err }},
		{"role grant-permission reconcile-apply --prefix=true readwrite " + under, func() error {
			_, err := admin.RoleGrantPermission(ctx, "reconcile-apply", under, end, clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		}},
		{"user add reconcile-plan", func() error { _, err := admin.UserAdd(ctx, "reconcile-plan", planPassword); return err }},
		{"user grant-role reconcile-plan reconcile-plan", func() error {
			_, err := admin.UserGrantRole(ctx, "reconcile-plan", "reconcile-plan")
			return err
		}},
		{"user add reconcile-apply", func() error { _, err := admin.UserAdd(ctx, "reconcile-apply", applyPassword); return err }},
		{"user grant-role reconcile-apply reconcile-apply", func() error {
			_, err := admin.UserGrantRole(ctx, "reconcile-apply", "reconcile-apply")
			return err
		}},
		{"auth enable", func() error { _, err := admin.AuthEnable(ctx); return err }},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("etcdctl %s: %v", step.etcdctl, err)
		}
	}
	root, err := clientv3.New(clientv3.Config{Endpoints: endpoints, Username: "root", Password: rootPassword, DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return &etcdRoles{root: root,
		planUser: "reconcile-plan:" + planPassword, applyUser: "reconcile-apply:" + applyPassword,
		planPassword: planPassword, applyPassword: applyPassword}
}

// keysUnder returns the keys etcd holds under prefix, read as root.
func (r *etcdRoles) keysUnder(t *testing.T, prefix string) []string {
	t.Helper()
	resp, err := r.root.Get(t.Context(), prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatalf("list the keys under %s: %v", prefix, err)
	}
	var keys []string
	for _, kv := range resp.Kvs {
		keys = append(keys, string(kv.Key))
	}
	return keys
}

// revision returns etcd's revision now: it grows with every write.
func (r *etcdRoles) revision(t *testing.T) int64 {
	t.Helper()
	resp, err := r.root.Get(t.Context(), "revision-probe")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

// TestE2EEtcdReadOnlyPlan: the plan user of the CI guide (read only on the
// prefix) plans a stack that does not exist yet as empty, writing nothing,
// and is told how to get a plan it can save; once the apply user has
// created the stack, the plan user's saved plan is what the apply user
// applies. Every write the plan user tries is refused by etcd, and says
// which permission is missing.
func TestE2EEtcdReadOnlyPlan(t *testing.T) {
	needBinary(t)
	t.Parallel()
	const prefix = "/reconcile/acme"
	eps := etcdtest.Start(t)
	roles := setUpEtcdRoles(t, eps, prefix)
	e := startEmulator(t)
	src := spec(policySpec("pol", rid(t, ""), "", ""))
	pr := runner(t, e, eps, prefix, "prod", src) // the pull request's job
	pr.extraEnv = append(pr.extraEnv, "ETCDCTL_USER="+roles.planUser)
	main := runner(t, e, eps, prefix, "prod", src) // the job on merge
	main.extraEnv = append(main.extraEnv, "ETCDCTL_USER="+roles.applyUser)
	noKeys := func(when string) {
		t.Helper()
		if keys := roles.keysUnder(t, prefix+"/"); len(keys) > 0 {
			t.Fatalf("%s: etcd holds %q, want no key under %s/", when, keys, prefix)
		}
	}

	// The stack does not exist: the plan shows every resource to create,
	// in each format, and writes nothing.
	rev := roles.revision(t)
	r := pr.must(0, "plan")
	wantStdout(t, r, "+ pol", "1 to create")
	wantStderr(t, r, "stack prod does not exist yet", "writes nothing", "the first apply creates the stack")
	pr.must(2, "plan", "--detailed-exitcode")
	r = pr.must(0, "plan", "--output", "json")
	var doc struct {
		Lineage string `json:"lineage"`
		Serial  int64  `json:"serial"`
		Changes []struct {
			Address string `json:"address"`
			Action  string `json:"action"`
		} `json:"changes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("plan --output json: %v\n%s", err, r.stdout)
	}
	actions := map[string]string{}
	for _, c := range doc.Changes {
		actions[c.Address] = c.Action
	}
	if want := map[string]string{"pol": "create", "me": "read", "svcPolicy": "read"}; doc.Lineage != "" || doc.Serial != 0 || !maps.Equal(actions, want) {
		t.Errorf("plan --output json = %+v, want lineage \"\", serial 0, pol to create and the lookups read", doc)
	}
	r = pr.must(0, "plan", "--output", "markdown")
	wantStdout(t, r, "1 to create", "create <code>pol</code>")
	r = pr.must(0, "plan", "--output", "jsonl")
	wantStdout(t, r, `"create"`)
	// So does the apply user's plan: a plan never writes.
	main.must(2, "plan", "--detailed-exitcode")
	noKeys("after the plans")
	if got := roles.revision(t); got != rev {
		t.Errorf("etcd's revision went from %d to %d during the plans: something was written", rev, got)
	}
	// A drift of a stack that does not exist is still an error, not a
	// clean empty state.
	r = pr.must(1, "drift")
	wantStderr(t, r, "does not exist")

	// A plan file is signed with the stack's key: none yet.
	r = pr.must(1, "plan", "--out", "pr.plan")
	wantStderr(t, r, `stack "prod" does not exist yet`, "reconcile stack init prod", "can write", "plan again")
	if _, err := os.Stat(pr.path("pr.plan")); err == nil {
		t.Errorf("plan --out of a stack that does not exist wrote the plan file")
	}

	// The plan user cannot create the stack, by any command.
	const advice = "etcdctl role grant-permission ROLE --prefix readwrite PREFIX/"
	for _, args := range [][]string{{"stack", "init", "prod"}, {"apply", "--auto-approve"}, {"import", "pol", rid(t, ""), "--type", "datadog:RestrictionPolicy"}} {
		r = pr.must(1, args...)
		wantStderr(t, r, "permission denied", advice)
	}
	noKeys("after the plan user's writes")
	if got := e.policy(rid(t, "")); len(got) != 0 {
		t.Fatalf("the plan user's apply made the policy: %v", got)
	}

	// Created once by the apply user, the stack takes saved plans.
	r = main.must(0, "stack", "init", "prod")
	wantStdout(t, r, "Created stack prod")
	r = pr.must(2, "plan", "--detailed-exitcode", "--out", "pr.plan")
	wantStdout(t, r, "1 to create", "Saved the plan to pr.plan")
	plan, err := os.ReadFile(pr.path("pr.plan"))
	if err != nil {
		t.Fatal(err)
	}
	main.write("pr.plan", string(plan))
	rev = roles.revision(t)
	r = pr.must(1, "apply", "pr.plan")
	wantStderr(t, r, "permission denied", advice)
	if got := roles.revision(t); got != rev {
		t.Errorf("the plan user's apply of the plan file changed etcd's revision from %d to %d", rev, got)
	}
	r = main.must(0, "apply", "pr.plan")
	wantStdout(t, r, "1 created")
	if got := e.policy(rid(t, "")); len(got) == 0 {
		t.Errorf("the applied plan made no policy")
	}
	pr.must(0, "plan", "--detailed-exitcode")
	pr.must(0, "drift")

	// With the stack there, still no write of the plan user is made.
	rev = roles.revision(t)
	for _, args := range [][]string{
		{"apply", "--auto-approve"}, {"destroy", "--auto-approve"}, {"state", "rm", "pol"},
		{"state", "taint", "pol"}, {"stack", "init", "staging"},
	} {
		r = pr.must(1, args...)
		wantStderr(t, r, "permission denied", advice)
	}
	if got := roles.revision(t); got != rev {
		t.Errorf("the plan user's writes changed etcd's revision from %d to %d", rev, got)
	}
	if got := e.policy(rid(t, "")); len(got) == 0 {
		t.Errorf("the plan user's destroy removed the policy")
	}
	pr.must(0, "plan", "--detailed-exitcode")

	for _, w := range []*ws{pr, main} {
		w.mu.Lock()
		for _, r := range w.runs {
			for _, secret := range []string{roles.planPassword, roles.applyPassword} {
				if strings.Contains(r.stdout+r.stderr, secret) {
					t.Errorf("reconcile %s shows an etcd password", strings.Join(r.args, " "))
				}
			}
		}
		w.mu.Unlock()
	}
}
