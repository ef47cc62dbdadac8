package main

// State on etcd over TLS, end to end: the real binary against an etcd
// member, started in the test process, that serves its clients over TLS
// only and requires a client certificate of them.

import (
	"strings"
	"testing"

	"github.com/reconcile-dev/reconcile/state/etcdstate/etcdtest"
)

// useTLS gives w etcd's TLS files as etcdctl's variables, "" leaving one
// empty, which is as unset; and the same files to w's own view of the
// state.
func (w *ws) useTLS(ca, cert, key string) {
	w.extraEnv = append(w.extraEnv, "ETCDCTL_CACERT="+ca, "ETCDCTL_CERT="+cert, "ETCDCTL_KEY="+key)
	w.etcd.CAFile, w.etcd.CertFile, w.etcd.KeyFile = ca, cert, key
}

// TestE2EEtcdTLS: with ETCDCTL_CACERT, ETCDCTL_CERT and ETCDCTL_KEY, the
// binary keeps its state on etcd that requires client certificates:
// apply, then a plan with no changes, and the stacks listed. Without the
// client certificate, a plan fails with exit 1 and says that etcd
// requires one and where it is given; with a CA file that is missing, it
// names the file and its variable.
func TestE2EEtcdTLS(t *testing.T) {
	needBinary(t)
	t.Parallel()
	m := etcdtest.StartTLS(t, true)
	e := startEmulator(t)
	const prefix = "/reconcile/tls"
	src := spec(policySpec("pol", rid(t, ""), "", ""))

	w := runner(t, e, m.Endpoints(), prefix, "prod", src)
	w.useTLS(m.CAFile, m.CertFile, m.KeyFile)
	r := w.must(0, "apply", "--auto-approve")
	wantStdout(t, r, "1 created")
	w.must(0, "plan", "--detailed-exitcode")
	if r := w.must(0, "stack", "ls"); r.stdout != "* prod\n" {
		t.Errorf("stack ls = %q, want prod marked current", r.stdout)
	}
	if got := w.meta().Serial; got == 0 {
		t.Errorf("the state on etcd is at serial 0 after an apply")
	}

	// The CA alone, as for etcd that does not ask for client
	// certificates: refused, with what to do.
	noCert := runner(t, e, m.Endpoints(), prefix, "prod", src)
	noCert.useTLS(m.CAFile, "", "")
	r = noCert.must(1, "plan", "--detailed-exitcode")
	wantStderr(t, r, "etcd://"+m.Endpoint+prefix, "requires a client certificate", "certificate required", "ETCDCTL_CERT", "ETCDCTL_KEY")
	if strings.Count(strings.TrimSpace(r.stderr), "\n") > 2 {
		t.Errorf("the error of a plan without a client certificate runs long:\n%s", r)
	}
	if r.stdout != "" {
		t.Errorf("a plan that could not read its state printed a plan:\n%s", r)
	}

	// A CA file that is not there: named, at once.
	missing := noCert.path("no-such-ca.pem")
	badCA := runner(t, e, m.Endpoints(), prefix, "prod", src)
	badCA.useTLS(missing, m.CertFile, m.KeyFile)
	r = badCA.must(1, "plan")
	wantStderr(t, r, missing, "cannot read the CA file", "ETCDCTL_CACERT")
}
