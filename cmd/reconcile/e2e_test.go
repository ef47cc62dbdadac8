package main

// End-to-end tests: the real reconcile binary, built once in TestMain, run
// as a user runs it (no terminal on stdin, its own working directory) against
// an in-process emulator of the cloud APIs. Each test starts its own
// emulator, fronted by a recording proxy so that tests can assert which cloud
// calls a command made, and its own working directory, so tests run in
// parallel.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/ailanguage"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
	"github.com/reconcile-dev/reconcile/state"
	"github.com/reconcile-dev/reconcile/state/etcdstate"
)

// binPath is the reconcile binary built by TestMain; "" when the e2e tests
// are skipped (-short) or the build failed.
var (
	binPath  string
	buildErr error
)

func TestMain(m *testing.M) {
	flag.Parse()
	var dir string
	if !testing.Short() {
		dir, buildErr = os.MkdirTemp("", "reconcile-e2e-bin-")
		if buildErr == nil {
			binPath = filepath.Join(dir, "reconcile")
			if runtime.GOOS == "windows" {
				binPath += ".exe"
			}
			buildErr = buildBinary(binPath)
		}
	}
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// goTool returns the go command of the toolchain running the tests, or "go"
// from PATH.
func goTool() string {
	name := "go"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	for _, root := range []string{os.Getenv("GOROOT"), runtime.GOROOT()} {
		if root == "" {
			continue
		}
		if p := filepath.Join(root, "bin", name); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// buildBinary builds this package (the test runs in its directory).
func buildBinary(out string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// -buildvcs=auto: the binary knows its commit (reconcile version), also
	// where GOFLAGS turns stamping off.
	cmd := exec.CommandContext(ctx, goTool(), "build", "-buildvcs=auto", "-o", out, ".")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, buf.String())
	}
	return nil
}

func needBinary(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test skipped in -short mode")
	}
	if buildErr != nil {
		t.Fatalf("building the reconcile binary failed: %v", buildErr)
	}
}

// ---------------------------------------------------------------------------
// The emulator

// apiCall is one cloud API call that went through the recording proxy.
type apiCall struct {
	Method string
	Path   string // unescaped
}

// emu is an in-process emulator behind a recording proxy.
type emu struct {
	t       *testing.T
	srv     *server.Server
	URL     string // the proxy: what the binary is given with --emulator=
	secrets map[string]string

	mu    sync.Mutex
	calls []apiCall
	// unavailable, when set, picks the calls the proxy answers 503
	// Service Unavailable (Retry-After: 1) without passing them on, as
	// an API in an outage does.
	unavailable func(*http.Request) bool
}

// setUnavailable makes the proxy answer the calls that pick chooses with
// 503 Service Unavailable; nil ends the outage.
func (e *emu) setUnavailable(pick func(*http.Request) bool) {
	e.mu.Lock()
	e.unavailable = pick
	e.mu.Unlock()
}

// startEmulator starts an emulator for t, stopped when t ends.
func startEmulator(t *testing.T) *emu {
	t.Helper()
	return startSeededEmulator(t, callerSeed)
}

// startSeededEmulator starts an emulator for t seeded with seedJSON (the
// emulator's --seed file), stopped when t ends.
func startSeededEmulator(t *testing.T, seedJSON string) *emu {
	t.Helper()
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(seed, []byte(seedJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, err := server.Start(server.Options{DataDir: filepath.Join(dir, "data"), SeedFile: seed})
	if err != nil {
		t.Fatalf("start the emulator: %v", err)
	}
	t.Cleanup(func() { srv.Close() })
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	e := &emu{t: t, srv: srv, secrets: map[string]string{}}
	for k, v := range server.Env(srv.Creds) {
		if v == "" {
			t.Fatalf("emulator credential %s is empty", k)
		}
		e.secrets[k] = v
	}
	// The body of the OCI private key, line by line: no line of it may leak.
	for i, line := range strings.Split(srv.Creds.OCIPrivateKey, "\n") {
		if len(line) >= 32 && !strings.HasPrefix(line, "-----") {
			e.secrets[fmt.Sprintf("OCI private key line %d", i)] = line
		}
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	ps := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/_emulator/") {
			e.mu.Lock()
			e.calls = append(e.calls, apiCall{r.Method, r.URL.Path})
			down := e.unavailable != nil && e.unavailable(r)
			e.mu.Unlock()
			if down {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Retry-After", "1")
				http.Error(w, "service unavailable", http.StatusServiceUnavailable)
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(ps.Close)
	e.URL = ps.URL
	return e
}

// mark returns a position in the call log, for callsSince.
func (e *emu) mark() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.calls)
}

// callsSince returns the calls after mark whose path contains sub.
func (e *emu) callsSince(mark int, sub string) []apiCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []apiCall
	for _, c := range e.calls[mark:] {
		if strings.Contains(c.Path, sub) {
			out = append(out, c)
		}
	}
	return out
}

func countMethod(calls []apiCall, method string) int {
	n := 0
	for _, c := range calls {
		if c.Method == method {
			n++
		}
	}
	return n
}

// do makes a request straight to the emulator (not through the proxy, so it
// is not recorded) and decodes the JSON answer into out.
func (e *emu) do(method, path string, body any, hdr map[string]string, out any) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		e.t.Fatalf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}

func (e *emu) ddHeaders() map[string]string {
	return map[string]string{"DD-API-KEY": e.secrets["DD_API_KEY"], "DD-APPLICATION-KEY": e.secrets["DD_APP_KEY"]}
}

type binding struct {
	Relation   string   `json:"relation"`
	Principals []string `json:"principals"`
}

// policy returns the restriction policy of resource rid as the Datadog API
// answers it; no bindings means no policy.
func (e *emu) policy(rid string) []binding {
	e.t.Helper()
	var doc struct {
		Data struct {
			Attributes struct {
				Bindings []binding `json:"bindings"`
			} `json:"attributes"`
		} `json:"data"`
	}
	e.do("GET", "/api/v2/restriction_policy/"+url.PathEscape(rid), nil, e.ddHeaders(), &doc)
	return doc.Data.Attributes.Bindings
}

// orgID returns the org of the Datadog current user.
func (e *emu) orgID() string {
	e.t.Helper()
	var doc struct {
		Data struct {
			Relationships struct {
				Org struct {
					Data struct {
						ID string `json:"id"`
					} `json:"data"`
				} `json:"org"`
			} `json:"relationships"`
		} `json:"data"`
	}
	e.do("GET", "/api/v2/current_user", nil, e.ddHeaders(), &doc)
	if doc.Data.Relationships.Org.Data.ID == "" {
		e.t.Fatal("current_user has no org")
	}
	return doc.Data.Relationships.Org.Data.ID
}

// serviceEtag returns the etag of a GCP managed service's IAM policy.
func (e *emu) serviceEtag(service string) string {
	e.t.Helper()
	var doc struct {
		Etag string `json:"etag"`
	}
	e.do("POST", "/v1/services/"+service+":getIamPolicy", map[string]any{},
		map[string]string{"Authorization": "Bearer " + e.secrets["GOOGLE_OAUTH_ACCESS_TOKEN"]}, &doc)
	if doc.Etag == "" {
		e.t.Fatalf("service %s has no etag", service)
	}
	return doc.Etag
}

// settings sets the emulator's latency, faults and delays.
func (e *emu) settings(s server.Settings) {
	e.t.Helper()
	e.do("PUT", "/_emulator/settings", s, nil, nil)
}

// activeModel returns an ACTIVE trained model of the OCI tenancy, found with
// the real list-models call of the official SDK.
func (e *emu) activeModel(dir string) string {
	e.t.Helper()
	c := e.ociClient(dir)
	comp := server.Tenancy
	resp, err := c.ListModels(context.Background(), ailanguage.ListModelsRequest{
		CompartmentId: &comp, LifecycleState: ailanguage.ModelLifecycleStateActive})
	if err != nil {
		e.t.Fatalf("OCI list models: %v", err)
	}
	for _, m := range resp.Items {
		if m.Id != nil && m.LifecycleState == ailanguage.ModelLifecycleStateActive {
			return *m.Id
		}
	}
	e.t.Fatalf("the emulator's tenancy has no ACTIVE model")
	return ""
}

// ---------------------------------------------------------------------------
// The working directory and the binary

// result is one run of the binary.
type result struct {
	args           []string
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

func (r result) String() string {
	return fmt.Sprintf("reconcile %s\nexit %d after %s\n--- stdout\n%s--- stderr\n%s", strings.Join(r.args, " "), r.code, r.elapsed.Round(time.Millisecond), r.stdout, r.stderr)
}

// ws is a user's working directory.
type ws struct {
	t    *testing.T
	dir  string
	tmp  string // TMPDIR of the binary
	emu  *emu
	mu   sync.Mutex
	runs []result
	// extraEnv are KEY=VALUE settings added to the binary's environment.
	extraEnv []string
	// etcd is the stack on etcd the directory's state is on, if it is.
	etcd *etcdstate.Options
}

// newWS makes a working directory for t using e. When t ends it checks that
// no credential of e appears in any output of the binary or any file it left
// in the directory, and that it left no temporary files behind.
func newWS(t *testing.T, e *emu) *ws {
	t.Helper()
	w := &ws{t: t, dir: t.TempDir(), tmp: t.TempDir(), emu: e}
	t.Cleanup(w.checkNoSecrets)
	return w
}

func (w *ws) path(name string) string { return filepath.Join(w.dir, name) }

func (w *ws) write(name, text string) {
	w.t.Helper()
	if err := os.WriteFile(w.path(name), []byte(text), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// env is the binary's environment: no cloud credentials of the person
// running the tests, a private HOME and TMPDIR, no colour.
func (w *ws) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "DD_"), strings.HasPrefix(k, "GOOGLE_"), strings.HasPrefix(k, "OCI_"),
			strings.HasPrefix(k, "RECONCILE_"), strings.HasPrefix(k, "PULUMI_"),
			k == "HOME", k == "TMPDIR", k == "NO_COLOR":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+w.dir, "TMPDIR="+w.tmp)
	return append(env, w.extraEnv...)
}

// rc runs the binary with args as they are.
func (w *ws) rc(args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Dir = w.dir
	cmd.Env = w.env()
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se // stdin: /dev/null, never a terminal
	start := time.Now()
	err := cmd.Run()
	r := result{args: args, stdout: so.String(), stderr: se.String(), elapsed: time.Since(start)}
	switch e := err.(type) {
	case nil:
	case *exec.ExitError:
		r.code = e.ExitCode()
	default:
		w.t.Fatalf("run reconcile %s: %v", strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		w.t.Fatalf("reconcile %s did not finish in time\n%s", strings.Join(args, " "), r)
	}
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic:") {
		w.t.Errorf("reconcile printed a stack trace:\n%s", r)
	}
	w.mu.Lock()
	w.runs = append(w.runs, r)
	w.mu.Unlock()
	if testing.Verbose() {
		w.t.Logf("%s", r)
	}
	return r
}

// run runs the binary with --emulator=URL of the working directory's
// emulator after args.
func (w *ws) run(args ...string) result {
	w.t.Helper()
	return w.rc(append(args, "--emulator="+w.emu.URL)...)
}

// must runs like run and fails the test unless the exit code is want.
func (w *ws) must(want int, args ...string) result {
	w.t.Helper()
	r := w.run(args...)
	if r.code != want {
		w.t.Fatalf("want exit %d, got:\n%s", want, r)
	}
	return r
}

func (w *ws) checkNoSecrets() {
	t := w.t
	w.mu.Lock()
	runs := w.runs
	w.mu.Unlock()
	for _, r := range runs {
		for name, s := range w.emu.secrets {
			if strings.Contains(r.stdout, s) || strings.Contains(r.stderr, s) {
				t.Errorf("the output of reconcile %s holds the emulator's %s", strings.Join(r.args, " "), name)
			}
		}
	}
	filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
			return err // a link's target is checked where it lies
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("read %s: %v", p, err)
			return nil
		}
		for name, s := range w.emu.secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds the emulator's %s", p, name)
			}
		}
		return nil
	})
	if left, _ := os.ReadDir(w.tmp); len(left) > 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("reconcile left temporary files behind in TMPDIR: %v", names)
	}
}

func wantContains(t *testing.T, r result, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("want %q in the output of:\n%s", s, r)
		}
	}
}

func wantStdout(t *testing.T, r result, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("want %q on stdout of:\n%s", s, r)
		}
	}
}

func wantStderr(t *testing.T, r result, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("want %q on stderr of:\n%s", s, r)
		}
	}
}

// wantOutput checks that the apply summary shows output name = value.
func wantOutput(t *testing.T, r result, name, value string) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(name) + ` += ` + regexp.QuoteMeta(fmt.Sprintf("%q", value)) + `$`)
	if !re.MatchString(r.stdout) {
		t.Errorf("want output %s = %q in:\n%s", name, value, r)
	}
}

// stateEntry is one element of the nodes of 'state list --output json'.
type stateEntry struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Kind    string `json:"kind"`
	ID      string `json:"id"`
	Tainted bool   `json:"tainted"`
	Protect bool   `json:"protect"`
}

func (w *ws) stateList() map[string]stateEntry {
	w.t.Helper()
	r := w.rc("state", "list", "--output", "json")
	if r.code != 0 {
		w.t.Fatalf("state list:\n%s", r)
	}
	checkJSONDoc(w.t, "state list --output json", r.stdout, "2.0")
	var list struct {
		Nodes []stateEntry `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		w.t.Fatalf("state list --output json: %v\n%s", err, r)
	}
	out := map[string]stateEntry{}
	for _, e := range list.Nodes {
		out[e.Name] = e
	}
	return out
}

// stateNode is 'state show NAME --output json'.
type stateNode struct {
	Name         string         `json:"name"`
	Type         string         `json:"type"`
	Kind         string         `json:"kind"`
	ID           string         `json:"id"`
	Inputs       map[string]any `json:"inputs"`
	Outputs      map[string]any `json:"outputs"`
	Dependencies []string       `json:"dependencies"`
	Protect      bool           `json:"protect"`
	Tainted      bool           `json:"tainted"`
	Deposed      []string       `json:"deposed"`
	Serial       int64          `json:"serial"`
	UpdatedAt    time.Time      `json:"updated_at"`
}

func (w *ws) stateShow(name string) stateNode {
	w.t.Helper()
	r := w.rc("state", "show", name, "--output", "json")
	if r.code != 0 {
		w.t.Fatalf("state show %s:\n%s", name, r)
	}
	// inputs and outputs hold the resource's fields, as the specs name
	// them, and null for a secret.
	checkJSONDoc(w.t, "state show --output json", r.stdout, "2.0", "inputs", "outputs")
	var n stateNode
	if err := json.Unmarshal([]byte(r.stdout), &n); err != nil {
		w.t.Fatalf("state show --output json: %v\n%s", err, r)
	}
	if n.UpdatedAt.IsZero() || n.UpdatedAt.Location() != time.UTC {
		w.t.Errorf("state show --output json: updated_at %v, want a time in UTC\n%s", n.UpdatedAt, r)
	}
	return n
}

// ---------------------------------------------------------------------------
// Specs

// rid returns a Datadog resource id unique to t.
func rid(t *testing.T, suffix string) string {
	name := strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(t.Name(), "-"))
	if suffix != "" {
		name += "-" + suffix
	}
	return "dashboard:" + name
}

// lookupsSpec declares the current-user and service-policy lookups and the
// outputs that use them; policies are appended to it.
const lookupsSpec = `variables:
  me:
    fn::invoke:
      function: datadog:getCurrentUser
  svcPolicy:
    fn::invoke:
      function: gcp:endpoints:getServiceIamPolicy
      arguments:
        serviceName: orders.endpoints.acme-prod.cloud.goog
outputs:
  policyEtag: ${svcPolicy.etag}
  orgPrincipal: org:${me.orgId}
`

// role1 is the role of the emulator's Datadog current user, whose keys
// reconcile uses (callerSeed): a policy giving role1, or the user's org,
// editor keeps the caller's own access, which Datadog refuses to take
// away. role2 is another role.
const role1 = "role:00000000-0000-0000-0000-000000000001"
const role2 = "role:00000000-0000-0000-0000-000000000002"

// callerSeed is the emulator seed file of startEmulator: the current user
// is in role1.
const callerSeed = `{"datadog": {"user": {"roleId": "00000000-0000-0000-0000-000000000001"}}}`

// policySpec is one datadog:RestrictionPolicy named name on resource rid,
// giving editor to the current user's org plus extra bindings, and options.
func policySpec(name, rid, extraBindings, options string) string {
	s := fmt.Sprintf(`  %s:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: %s
      bindings:
        - relation: editor
          principals: ["org:${me.orgId}"]
%s`, name, rid, extraBindings)
	if options != "" {
		s += "    options:\n" + options
	}
	return s
}

func spec(resources ...string) string {
	return lookupsSpec + "resources:\n" + strings.Join(resources, "")
}

// ---------------------------------------------------------------------------
// Scenarios

func TestE2EApplyLookupsThenNoChanges(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	w.write("main.yaml", spec(policySpec("pol", id, "", "")))

	r := w.must(0, "apply", "--auto-approve")
	wantStdout(t, r, "Apply complete!", "1 created", "pol: Creation complete")
	org := e.orgID()
	etag := e.serviceEtag("orders.endpoints.acme-prod.cloud.goog")
	wantOutput(t, r, "policyEtag", etag)
	wantOutput(t, r, "orgPrincipal", "org:"+org)

	got := e.policy(id)
	if len(got) != 1 || got[0].Relation != "editor" || !slices.Equal(got[0].Principals, []string{"org:" + org}) {
		t.Errorf("policy of %s in the emulator = %+v, want editor for org:%s", id, got, org)
	}

	st := w.stateList()
	if p := st["pol"]; p.Kind != "resource" || p.Type != "datadog:RestrictionPolicy" || p.ID != id {
		t.Errorf("state list: pol = %+v", p)
	}
	if l := st["svcPolicy"]; l.Kind != "lookup" || l.Type != "gcp:endpoints:getServiceIamPolicy" {
		t.Errorf("state list: svcPolicy = %+v", l)
	}
	if l := st["me"]; l.Kind != "lookup" || l.Type != "datadog:getCurrentUser" {
		t.Errorf("state list: me = %+v", l)
	}
	if n := w.stateShow("svcPolicy"); n.Outputs["etag"] != etag {
		t.Errorf("state show svcPolicy: etag = %v, want %q", n.Outputs["etag"], etag)
	}
	if n := w.stateShow("me"); n.Outputs["orgId"] != org {
		t.Errorf("state show me: orgId = %v, want %q", n.Outputs["orgId"], org)
	}
	n := w.stateShow("pol")
	if n.Inputs["resourceId"] != id || n.Outputs["id"] != id {
		t.Errorf("state show pol: inputs %v outputs %v", n.Inputs, n.Outputs)
	}
	if fi, err := os.Stat(w.path(".reconcile/state.db")); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, want 0600", fi.Mode().Perm())
	}

	mark := e.mark()
	r = w.must(0, "plan", "--detailed-exitcode")
	wantStdout(t, r, "No changes")
	if calls := e.callsSince(mark, "/api/v2/restriction_policy/"); countMethod(calls, "POST")+countMethod(calls, "DELETE") != 0 {
		t.Errorf("plan wrote to the cloud: %v", calls)
	}
}

func TestE2EApplyNeedsApprovalWithoutTTY(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	w.write("main.yaml", spec(policySpec("pol", id, "", "")))
	r := w.must(1, "apply")
	wantStderr(t, r, "--auto-approve")
	if got := e.policy(id); len(got) != 0 {
		t.Errorf("apply without approval created the policy: %+v", got)
	}
	if calls := e.callsSince(0, "/api/v2/restriction_policy/"); countMethod(calls, "POST") != 0 {
		t.Errorf("apply without approval wrote to the cloud: %v", calls)
	}
	if _, ok := w.stateList()["pol"]; ok {
		t.Errorf("apply without approval recorded pol in state")
	}

	w.must(0, "apply", "--auto-approve")
	r = w.must(1, "destroy")
	wantStderr(t, r, "--auto-approve")
	if got := e.policy(id); len(got) != 1 {
		t.Errorf("destroy without approval deleted the policy")
	}
}

func TestE2EUpdateInPlace(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	w.write("main.yaml", spec(policySpec("pol", id, "", "")))
	w.must(0, "apply", "--auto-approve")

	extra := fmt.Sprintf("        - relation: viewer\n          principals: [%q, %q]\n", role1, role2)
	w.write("main.yaml", spec(policySpec("pol", id, extra, "")))
	r := w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, "~ pol", "will be updated in place", "1 to update", "0 to replace")
	if strings.Contains(r.stdout, "forces replacement") {
		t.Errorf("a bindings change must not force a replacement:\n%s", r)
	}

	mark := e.mark()
	r = w.must(0, "apply", "--auto-approve")
	wantStdout(t, r, "Apply complete!", "1 updated", "0 replaced")
	calls := e.callsSince(mark, "/api/v2/restriction_policy/")
	if countMethod(calls, "POST") != 1 || countMethod(calls, "DELETE") != 0 {
		t.Errorf("an update in place must be exactly one POST and no DELETE; the calls were %v", calls)
	}
	got := e.policy(id)
	if len(got) != 2 {
		t.Fatalf("policy after the update = %+v, want 2 bindings", got)
	}
	n := w.stateShow("pol")
	if bs, _ := n.Inputs["bindings"].([]any); len(bs) != 2 {
		t.Errorf("state inputs after the update: bindings = %v, want 2", n.Inputs["bindings"])
	}

	// Bindings and principals compare as sets: reordering changes nothing.
	reordered := fmt.Sprintf(`  pol:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: %s
      bindings:
        - relation: viewer
          principals: [%q, %q]
        - relation: editor
          principals: ["org:${me.orgId}"]
`, id, role2, role1)
	w.write("main.yaml", spec(reordered))
	r = w.must(0, "plan", "--detailed-exitcode")
	wantStdout(t, r, "No changes")
}

func TestE2EReplace(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	oldID, newID := rid(t, "old"), rid(t, "new")
	w.write("main.yaml", spec(policySpec("pol", oldID, "", "")))
	w.must(0, "apply", "--auto-approve")

	w.write("main.yaml", spec(policySpec("pol", newID, "", "")))
	r := w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, "must be replaced", "forces replacement", "1 to replace")
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, "forces replacement") && !strings.Contains(line, "resourceId") {
			t.Errorf("only resourceId forces the replacement, got line %q", line)
		}
	}

	mark := e.mark()
	r = w.must(0, "apply", "--auto-approve")
	wantStdout(t, r, "Apply complete!", "1 replaced")
	if got := e.policy(oldID); len(got) != 0 {
		t.Errorf("the old policy on %s is still there: %+v", oldID, got)
	}
	if got := e.policy(newID); len(got) != 1 {
		t.Errorf("the new policy on %s = %+v, want one binding", newID, got)
	}
	// Create first: the new policy is written before the old one is deleted.
	var order []string
	for _, c := range e.callsSince(mark, "/api/v2/restriction_policy/") {
		if c.Method == "POST" || c.Method == "DELETE" {
			order = append(order, c.Method+" "+strings.TrimPrefix(c.Path, "/api/v2/restriction_policy/"))
		}
	}
	if want := []string{"POST " + newID, "DELETE " + oldID}; !slices.Equal(order, want) {
		t.Errorf("replacement calls %v, want %v", order, want)
	}
	if p := w.stateList()["pol"]; p.ID != newID {
		t.Errorf("state: pol id = %q, want %q", p.ID, newID)
	}
	w.must(0, "plan", "--detailed-exitcode")
}

func TestE2EPlanFileApply(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	w.write("main.yaml", spec(policySpec("pol", id, "", "")))

	r := w.must(2, "plan", "--out", "tf.plan", "--detailed-exitcode")
	wantStdout(t, r, "Saved the plan to tf.plan")
	if fi, err := os.Stat(w.path("tf.plan")); err != nil {
		t.Fatal(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Errorf("plan file mode %v, want 0600", fi.Mode().Perm())
	}
	if len(e.policy(id)) != 0 {
		t.Fatal("plan --out created the policy")
	}
	// No --auto-approve and no terminal: the plan file is the approval.
	r = w.must(0, "apply", "tf.plan")
	wantStdout(t, r, "Apply complete!", "1 created")
	if len(e.policy(id)) != 1 {
		t.Errorf("apply of the plan file did not create the policy")
	}
	w.must(0, "plan", "--detailed-exitcode")

	// A plan file is good for one apply only: the state has moved on.
	r = w.must(1, "apply", "tf.plan")
	wantStderr(t, r, "state changed")
}

func TestE2EPlanFileStaleState(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	a, b := rid(t, "a"), rid(t, "b")
	w.write("main.yaml", spec(policySpec("a", a, "", "")))
	w.must(0, "apply", "--auto-approve")

	w.write("main.yaml", spec(policySpec("a", a, "", ""), policySpec("b", b, "", "")))
	w.must(2, "plan", "--out", "stale.plan", "--detailed-exitcode")
	// Someone else applies in between.
	w.must(0, "apply", "--auto-approve")
	mark := e.mark()
	r := w.must(1, "apply", "stale.plan")
	wantStderr(t, r, "the state changed since the plan was made", "reconcile plan --out")
	if calls := e.callsSince(mark, "/api/v2/restriction_policy/"); countMethod(calls, "POST")+countMethod(calls, "DELETE") != 0 {
		t.Errorf("a refused plan file wrote to the cloud: %v", calls)
	}
}

func TestE2EPlanFileEditedSpec(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	w.write("main.yaml", spec(policySpec("pol", id, "", "")))
	w.must(2, "plan", "--out", "p.plan", "--detailed-exitcode")
	w.write("main.yaml", spec(policySpec("pol", id, fmt.Sprintf("        - relation: viewer\n          principals: [%q]\n", role1), "")))
	r := w.must(1, "apply", "p.plan")
	wantStderr(t, r, "specs or config values changed")
	if len(e.policy(id)) != 0 {
		t.Errorf("a refused plan file created the policy")
	}
	// From another directory, the plan file still names its specs and state.
	w.must(2, "plan", "--out", "p.plan", "--detailed-exitcode")
	other := newWS(t, e)
	r = other.must(0, "apply", filepath.Join(w.dir, "p.plan"))
	wantStdout(t, r, "Apply complete!", "1 created")
	if len(e.policy(id)) != 2 {
		t.Errorf("policy after apply of the plan file = %+v, want 2 bindings", e.policy(id))
	}
	if fileExists(other.path(".reconcile/state.db")) {
		t.Errorf("apply PLANFILE from another directory wrote a state there instead of the plan's state")
	}
}

func TestE2EOutputFormats(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	w.write("main.yaml", spec(policySpec("pol", id, "", "")))

	r := w.must(0, "plan", "--output", "json")
	var pl struct {
		FormatVersion string `json:"format_version"`
		Changes       []struct {
			Address string `json:"address"`
			Type    string `json:"type"`
			Kind    string `json:"kind"`
			Action  string `json:"action"`
		} `json:"changes"`
		Summary    map[string]int `json:"summary"`
		HasChanges bool           `json:"has_changes"`
		Outputs    map[string]any `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &pl); err != nil {
		t.Fatalf("plan --output json does not parse: %v\n%s", err, r)
	}
	if !strings.HasPrefix(pl.FormatVersion, "1.") {
		t.Errorf("format_version = %q, want 1.x", pl.FormatVersion)
	}
	if !pl.HasChanges || pl.Summary["create"] != 1 || pl.Summary["read"] != 2 {
		t.Errorf("plan json: has_changes %v summary %v", pl.HasChanges, pl.Summary)
	}
	actions := map[string]string{}
	for _, c := range pl.Changes {
		actions[c.Address] = c.Action
	}
	if actions["pol"] != "create" || actions["me"] != "read" || actions["svcPolicy"] != "read" {
		t.Errorf("plan json actions = %v", actions)
	}
	if _, ok := pl.Outputs["policyEtag"]; !ok {
		t.Errorf("plan json has no output policyEtag: %v", pl.Outputs)
	}

	r = w.must(0, "plan", "--output", "markdown")
	if !strings.HasPrefix(r.stdout, "## Plan: 1 to create, 0 to update, 0 to replace, 0 to destroy") {
		t.Errorf("markdown plan does not start with its summary:\n%s", r)
	}
	wantStdout(t, r, "| Action | Address | Type |", "<code>pol</code>")

	r = w.must(0, "apply", "--auto-approve", "--output", "json")
	var applied map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &applied); err != nil {
		t.Fatalf("apply --output json does not parse: %v\n%s", err, r)
	}
	// docs/apply-json.md: every field present, lists [] rather than null,
	// every action counted.
	for _, k := range []string{"format_version", "run", "complete", "stopped", "counts", "failed", "interrupted", "skipped", "not_started", "deposed", "outputs"} {
		if _, ok := applied[k]; !ok {
			t.Errorf("apply json has no %q: %s", k, r.stdout)
		}
	}
	for _, k := range []string{"failed", "interrupted", "skipped", "not_started", "deposed"} {
		if l, ok := applied[k].([]any); !ok || len(l) != 0 {
			t.Errorf("apply json %q = %#v, want []", k, applied[k])
		}
	}
	counts, _ := applied["counts"].(map[string]any)
	if applied["format_version"] != "2.1" || applied["run"] != "apply" || applied["complete"] != true || counts["create"] != 1.0 || counts["delete"] != 0.0 || len(counts) != 8 {
		t.Errorf("apply json = %s", r.stdout)
	}
	if _, ok := applied["outputs"].(map[string]any)["policyEtag"]; !ok {
		t.Errorf("apply json has no output policyEtag: %s", r.stdout)
	}

	r = w.must(0, "plan", "--output", "markdown")
	wantStdout(t, r, "No changes")
}

func TestE2EDestroy(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	a, b := rid(t, "a"), rid(t, "b")
	w.write("main.yaml", spec(policySpec("a", a, "", ""), policySpec("b", b, "", "      dependsOn: [\"${a}\"]\n")))
	w.must(0, "apply", "--auto-approve")
	if n := w.stateShow("b"); !slices.Equal(n.Dependencies, []string{"a"}) {
		t.Errorf("state show b: dependencies %v, want [a]", n.Dependencies)
	}

	mark := e.mark()
	r := w.must(0, "destroy", "--auto-approve")
	wantStdout(t, r, "Destroy complete!", "2 destroyed")
	if len(e.policy(a)) != 0 || len(e.policy(b)) != 0 {
		t.Errorf("destroy left policies behind: %s %+v, %s %+v", a, e.policy(a), b, e.policy(b))
	}
	// Reverse dependency order: b depends on a, so b goes first.
	var order []string
	for _, c := range e.callsSince(mark, "/api/v2/restriction_policy/") {
		if c.Method == "DELETE" {
			order = append(order, strings.TrimPrefix(c.Path, "/api/v2/restriction_policy/"))
		}
	}
	if !slices.Equal(order, []string{b, a}) {
		t.Errorf("destroy deleted %v, want %v (reverse dependency order)", order, []string{b, a})
	}
	for name, n := range w.stateList() {
		if n.Kind == "resource" {
			t.Errorf("destroy left resource %s in state: %+v", name, n)
		}
	}
	r = w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, "2 to create")
	// Nothing left to destroy: a second destroy is a no-op.
	r = w.must(0, "destroy", "--auto-approve")
	wantStdout(t, r, "0 destroyed")
}

func TestE2EProtect(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	w.write("main.yaml", spec(policySpec("pol", id, "", "      protect: true\n")))
	w.must(0, "apply", "--auto-approve")
	if p := w.stateList()["pol"]; !p.Protect {
		t.Errorf("state does not record protect: %+v", p)
	}

	r := w.must(1, "destroy", "--auto-approve")
	wantContains(t, r, "protected")
	if len(e.policy(id)) != 1 {
		t.Errorf("destroy deleted a protected policy")
	}
	if _, ok := w.stateList()["pol"]; !ok {
		t.Errorf("destroy removed a protected resource from state")
	}

	// Removing a protected resource from the specs does not delete it either.
	w.write("main.yaml", lookupsSpec)
	r = w.must(1, "apply", "--auto-approve")
	wantContains(t, r, "protected")
	if len(e.policy(id)) != 1 {
		t.Errorf("apply deleted a protected policy")
	}
	// Nor does a change that needs a replacement.
	w.write("main.yaml", spec(policySpec("pol", rid(t, "moved"), "", "      protect: true\n")))
	r = w.must(1, "plan")
	wantContains(t, r, "protected")
}

func TestE2EStateCommands(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	w.write("main.yaml", spec(policySpec("pol", id, "", "")))
	w.must(0, "apply", "--auto-approve")

	r := w.must(0, "state", "list")
	wantStdout(t, r, "NAME", "pol", "datadog:RestrictionPolicy", id)
	r = w.must(0, "state", "show", "pol")
	wantStdout(t, r, "# pol (datadog:RestrictionPolicy, resource)", fmt.Sprintf("id = %q", id), "resourceId")
	r = w.must(1, "state", "show", "poll")
	wantStderr(t, r, `"pol"`) // did you mean

	r = w.must(0, "state", "mv", "pol", "renamed")
	wantStdout(t, r, "Moved pol to renamed.")
	w.write("main.yaml", spec(policySpec("renamed", id, "", "")))
	r = w.must(0, "plan", "--detailed-exitcode")
	wantStdout(t, r, "No changes")
	if _, ok := w.stateList()["pol"]; ok {
		t.Errorf("pol is still in state after mv")
	}
	w.must(1, "state", "mv", "renamed", "me") // taken

	r = w.must(0, "state", "rm", "renamed")
	wantStdout(t, r, "Removed renamed from state")
	if len(e.policy(id)) != 1 {
		t.Errorf("state rm deleted the policy from the cloud")
	}
	r = w.must(2, "plan", "--detailed-exitcode")
	wantStdout(t, r, "+ renamed", "1 to create")
	w.must(1, "state", "rm", "renamed")

	r = w.must(0, "state", "history")
	wantStdout(t, r, "SERIAL", "apply", "state mv pol renamed", "state rm renamed")
	r = w.must(0, "state", "history", "--output", "json")
	checkJSONDoc(t, "state history --output json", r.stdout, "2.0")
	var hs struct {
		Serial  int64 `json:"serial"`
		Entries []struct {
			Serial  int64          `json:"serial"`
			Time    time.Time      `json:"time"`
			Command string         `json:"command"`
			Counts  map[string]int `json:"counts"`
		} `json:"entries"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &hs); err != nil {
		t.Fatalf("state history --output json: %v\n%s", err, r)
	}
	if len(hs.Entries) != 3 {
		t.Fatalf("history has %d entries, want 3 (apply, mv, rm): %+v", len(hs.Entries), hs)
	}
	if h := hs.Entries[1]; h.Command != "state mv pol renamed" || fmt.Sprint(h.Counts) != "map[move:1]" || h.Time.Location() != time.UTC || h.Serial <= 0 || h.Serial >= hs.Serial {
		t.Errorf("history entry 1 = %+v, want the state mv, move 1, in UTC, at a serial before the state's %d", h, hs.Serial)
	}
	w.must(1, "state", "frobnicate")
}

func TestE2ELockHeld(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	w.write("main.yaml", spec(policySpec("pol", id, "", "")))

	st, err := state.Open(w.path(".reconcile/state.db"), state.Options{Command: "e2e-test-holder", Create: true})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			st.Close()
		}
	}()
	pid := fmt.Sprintf("pid %d", os.Getpid())
	for _, args := range [][]string{
		{"apply", "--auto-approve", "--lock-timeout", "200ms"},
		{"plan", "--lock-timeout", "200ms"},
		{"state", "rm", "pol", "--lock-timeout", "200ms"},
	} {
		r := w.must(1, args...)
		wantStderr(t, r, "locked by "+pid, "e2e-test-holder")
		// bbolt gives up one 50ms retry early; anything near the timeout
		// shows that the binary waited rather than failing at once.
		if r.elapsed < 140*time.Millisecond {
			t.Errorf("%v gave up after %s, before --lock-timeout 200ms", args, r.elapsed)
		}
	}
	if len(e.policy(id)) != 0 {
		t.Errorf("apply changed the cloud without the lock")
	}
	// A plan opens its state while its specs load: specs with errors are
	// reported as they are, without a word of the lock or a wait for it.
	w.write("main.yaml", spec(policySpec("pol", id, "", ""))+"  broken: {type: datadog:RestrictionPolicy, properties: {resourceId: 1}}\n")
	r := w.must(1, "plan", "--lock-timeout", "10m")
	wantStderr(t, r, "2 errors in the specs; nothing was done")
	if strings.Contains(r.stderr, "Waiting") || strings.Contains(r.stderr, "lock") || r.elapsed > 5*time.Minute {
		t.Errorf("plan of specs with errors, the lock held: after %s, stderr:\n%s", r.elapsed, r.stderr)
	}
	w.write("main.yaml", spec(policySpec("pol", id, "", "")))
	st.Close()
	closed = true
	r = w.must(0, "apply", "--auto-approve", "--lock-timeout", "200ms")
	wantStdout(t, r, "Apply complete!")
}

func TestE2EPartialFailure(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	good, bad, dep := rid(t, "good"), rid(t, "bad"), rid(t, "dep")
	// A principal whose id is not a UUID: Datadog says 400 at apply (the
	// plan cannot tell it without reading the principals).
	badSpec := fmt.Sprintf(`  bad:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: %s
      bindings:
        - relation: editor
          principals: [%q, "role:not-a-uuid"]
`, bad, role1)
	w.write("main.yaml", spec(policySpec("good", good, "", ""), badSpec, policySpec("dep", dep, "", "      dependsOn: [\"${bad}\"]\n")))

	mark := e.mark()
	r := w.must(1, "apply", "--auto-approve")
	wantStdout(t, r, "Apply incomplete", "1 created", "1 failed", "1 skipped", "Skipped because a dependency failed: dep")
	wantStderr(t, r, "Error: bad", "Invalid principal")
	if n := countMethod(e.callsSince(mark, strings.TrimPrefix(bad, "dashboard:")), "POST"); n != 1 {
		t.Errorf("the create refused with a 400 was sent %d times, want once: a 400 is not retried", n)
	}
	if len(e.policy(good)) != 1 {
		t.Errorf("the independent resource was not created")
	}
	if len(e.policy(dep)) != 0 {
		t.Errorf("the resource depending on the failed one was created")
	}
	st := w.stateList()
	if st["good"].ID != good {
		t.Errorf("state does not hold the resource that succeeded: %+v", st)
	}
	if _, ok := st["bad"]; ok {
		t.Errorf("state holds the failed resource: %+v", st["bad"])
	}
	if _, ok := st["dep"]; ok {
		t.Errorf("state holds the skipped resource: %+v", st["dep"])
	}

	w.write("main.yaml", spec(policySpec("good", good, "", ""), strings.Replace(badSpec, `, "role:not-a-uuid"`, "", 1), policySpec("dep", dep, "", "      dependsOn: [\"${bad}\"]\n")))
	r = w.must(0, "apply", "--auto-approve")
	wantStdout(t, r, "Apply complete!", "2 created", "0 updated")
	if len(e.policy(bad)) != 1 || len(e.policy(dep)) != 1 {
		t.Errorf("the second apply did not create bad and dep")
	}
	w.must(0, "plan", "--detailed-exitcode")
}

func TestE2EProgressOCI(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	model := e.activeModel(t.TempDir())
	e.settings(server.Settings{CreateDelayMS: 1500})
	w.write("main.yaml", "resources:\n"+endpointSpec("ep", model, strings.ToLower(t.Name()), ""))

	r := w.must(0, "apply", "--auto-approve", "--progress-interval", "100ms")
	wantStdout(t, r, "ep: Creating...", "ep: Still creating...", "ep: Creation complete", "Apply complete!")
	if n := strings.Count(r.stdout, "Still creating..."); n < 3 {
		t.Errorf("%d progress lines in a 1.5s create at a 100ms interval, want several", n)
	}
	n := w.stateShow("ep")
	if n.Outputs["state"] != "ACTIVE" || n.Inputs["inferenceUnits"] == nil {
		t.Errorf("state show ep: inputs %v outputs %v", n.Inputs, n.Outputs)
	}
	e.settings(server.Settings{})
	w.must(0, "plan", "--detailed-exitcode")
}

func TestE2ECredentialsNeverAppear(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	id := rid(t, "")
	w.write("main.yaml", spec(policySpec("pol", id, "", "")))

	// newWS checks every output and file at the end; this test makes sure
	// every kind of output and file exists, and checks the named ones too.
	w.must(2, "plan", "--out", "p.plan", "--detailed-exitcode")
	w.must(0, "plan", "--output", "json")
	w.must(0, "plan", "--output", "markdown")
	w.must(0, "apply", "p.plan")
	w.must(0, "apply", "--auto-approve", "--output", "json")
	w.must(0, "state", "show", "me", "--output", "json")
	w.must(0, "state", "show", "svcPolicy")
	w.must(0, "state", "history", "--output", "json")
	w.must(0, "destroy", "--auto-approve")
	// A failing run too: wrong credentials of a dead emulator must not show.
	if r := w.rc("plan", "--emulator=http://127.0.0.1:1"); r.code != 1 {
		t.Errorf("plan against no emulator: want exit 1, got:\n%s", r)
	}
	for _, f := range []string{"p.plan", ".reconcile/state.db"} {
		b, err := os.ReadFile(w.path(f))
		if err != nil {
			t.Fatal(err)
		}
		for name, s := range e.secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds the emulator's %s", f, name)
			}
		}
	}
}

// TestE2EBuiltinEmulator uses --emulator without a URL: each command starts
// its own in-process emulator on the data in .reconcile/emulator.
func TestE2EBuiltinEmulator(t *testing.T) {
	needBinary(t)
	t.Parallel()
	w := newWS(t, startEmulator(t))
	w.write("main.yaml", spec(policySpec("pol", "dashboard:builtin", "", "")))
	r := w.rc("apply", "--emulator", "--auto-approve")
	if r.code != 0 {
		t.Fatalf("apply --emulator:\n%s", r)
	}
	wantStdout(t, r, "Apply complete!", "1 created")
	// The emulator's data outlives the process: the next plan sees the policy.
	r = w.rc("plan", "--emulator", "--detailed-exitcode")
	if r.code != 0 {
		t.Fatalf("plan --emulator after apply:\n%s", r)
	}
	env, err := os.ReadFile(w.path(".reconcile/emulator/credentials/env"))
	if err != nil {
		t.Fatalf("the built-in emulator wrote no credentials: %v", err)
	}
	st, err := os.ReadFile(w.path(".reconcile/state.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(env)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		if v == "" {
			t.Errorf("credentials/env: empty %s", k)
			continue
		}
		if bytes.Contains(st, []byte(v)) {
			t.Errorf("the state holds the built-in emulator's %s", k)
		}
		for _, r := range w.runs {
			if strings.Contains(r.stdout+r.stderr, v) {
				t.Errorf("the output of reconcile %v holds the built-in emulator's %s", r.args, k)
			}
		}
	}
}

// TestE2EEmulateCommand runs 'reconcile emulate' as a server process, with
// a Datadog rate limit of its own, points another command at it with
// --emulator=URL and stops it with an interrupt.
func TestE2EEmulateCommand(t *testing.T) {
	needBinary(t)
	if runtime.GOOS == "windows" {
		t.Skip("needs os.Interrupt")
	}
	t.Parallel()
	w := newWS(t, startEmulator(t))
	data := t.TempDir()
	cmd := exec.Command(binPath, "emulate", "--listen", "127.0.0.1:0", "--data", data, "--datadog-rate-limit", "50")
	cmd.Dir, cmd.Env = w.dir, w.env()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	lines := make(chan string, 16)
	go func() {
		b := make([]byte, 0, 4096)
		buf := make([]byte, 1024)
		for {
			n, err := stdout.Read(buf)
			b = append(b, buf[:n]...)
			for {
				i := bytes.IndexByte(b, '\n')
				if i < 0 {
					break
				}
				lines <- string(b[:i])
				b = b[i+1:]
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	go func() { done <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			cmd.Process.Kill()
			<-done
		}
	}()
	urlRE := regexp.MustCompile(`--emulator=(http://127\.0\.0\.1:\d+)`)
	var emuURL string
	var seen []string
	timeout := time.After(20 * time.Second)
	for emuURL == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				err := <-done
				stopped = true
				t.Fatalf("emulate ended before printing its URL: %v\n%s\n%s", err, strings.Join(seen, "\n"), stderr.String())
			}
			seen = append(seen, line)
			if m := urlRE.FindStringSubmatch(line); m != nil {
				emuURL = m[1]
			}
		case <-timeout:
			t.Fatalf("emulate printed no URL in time:\n%s", strings.Join(seen, "\n"))
		}
	}
	for _, f := range []string{"oci_config", "oci_api_key.pem", "env"} {
		fi, err := os.Stat(filepath.Join(data, "credentials", f))
		if err != nil {
			t.Errorf("emulate --data: %v", err)
		} else if fi.Mode().Perm() != 0o600 {
			t.Errorf("emulate wrote %s with mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	resp, err := http.Get(emuURL + "/_emulator/settings")
	if err != nil {
		t.Fatal(err)
	}
	var settings server.Settings
	err = json.NewDecoder(resp.Body).Decode(&settings)
	resp.Body.Close()
	if err != nil || settings.DatadogRateLimit != 50 {
		t.Errorf("emulate --datadog-rate-limit 50: settings %+v (%v), want datadogRateLimit 50", settings, err)
	}
	w.write("main.yaml", spec(policySpec("pol", "dashboard:emulate-cmd", "", "")))
	r := w.rc("apply", "--auto-approve", "--emulator="+emuURL)
	if r.code != 0 {
		t.Fatalf("apply against 'reconcile emulate':\n%s", r)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		stopped = true
		if err != nil {
			t.Errorf("emulate after an interrupt: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("emulate did not stop after an interrupt")
	}
	var rest []string
	for line := range lines {
		rest = append(rest, line)
	}
	if !slices.Contains(rest, "Emulator stopped.") {
		t.Errorf("emulate did not say it stopped: %q", rest)
	}
}

// Datadog refuses bindings that would lower the access of the user whose
// key reconcile uses, and reconcile never asks to lock that user out: a
// plan (and so an apply) that would is refused before anything is
// written, with the API's reason and what to do, --allow-self-lockout
// or not; the create makes nothing, the update changes nothing.
func TestE2EPolicySelfLockoutRefused(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	kept, fresh := rid(t, "kept"), rid(t, "fresh")
	w.write("main.yaml", spec(policySpec("kept", kept, "", "")))
	w.must(0, "apply", "--auto-approve")

	// The org, the caller's, goes from editor to viewer; a new policy
	// gives editor to another role only.
	w.write("main.yaml", lookupsSpec+fmt.Sprintf(`resources:
  kept:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: %s
      bindings:
        - relation: viewer
          principals: ["org:${me.orgId}"]
        - relation: editor
          principals: [%q]
  fresh:
    type: datadog:RestrictionPolicy
    properties:
      resourceId: %s
      bindings:
        - relation: editor
          principals: [%q]
`, kept, role2, fresh, role2))
	mark := e.mark()
	for _, args := range [][]string{{"apply", "--auto-approve"}, {"plan"}, {"plan", "--allow-self-lockout"}} {
		r := w.must(1, args...)
		wantStderr(t, r, "main.yaml:",
			"kept: Datadog would refuse these bindings at apply: users cannot decrease their own level of access (from editor to viewer)",
			"fresh: Datadog would refuse these bindings at apply: users cannot decrease their own level of access (from editor to no access)",
			"application key (DD_APP_KEY)", "org:"+e.orgID(), "datadog:getCurrentUser")
	}
	if calls := e.callsSince(mark, "/api/v2/restriction_policy/"); countMethod(calls, "POST") != 0 {
		t.Errorf("a refused plan wrote restriction policies: %v", calls)
	}
	if got := e.policy(kept); len(got) != 1 || got[0].Relation != "editor" || !slices.Equal(got[0].Principals, []string{"org:" + e.orgID()}) {
		t.Errorf("policy of %s after the refused update = %+v, want the org editor still", kept, got)
	}
	if got := e.policy(fresh); len(got) != 0 {
		t.Errorf("policy of %s after the refused create = %+v, want none", fresh, got)
	}
}

// A plan file of a few changes to many resources lets its apply load the
// specs without the entries of the resources it leaves alone (the plan's
// cuts): the apply does what it would with the whole specs, forgets
// nothing, and still refuses specs edited since, inside a cut entry too.
func TestE2EPlanFileApplyLoadsWhatChanges(t *testing.T) {
	needBinary(t)
	t.Parallel()
	e := startEmulator(t)
	w := newWS(t, e)
	var pols []string
	for i := range 8 {
		pols = append(pols, policySpec(fmt.Sprintf("pol%d", i), rid(t, fmt.Sprint(i)), "", ""))
	}
	w.write("main.yaml", spec(pols...))
	w.must(0, "apply", "--auto-approve")
	before := w.stateList()

	changed := slices.Clone(pols)
	changed[3] = policySpec("pol3", rid(t, "3"), fmt.Sprintf("        - relation: viewer\n          principals: [%q]\n", role2), "")
	w.write("main.yaml", spec(changed...))
	w.must(2, "plan", "--out", "p.plan", "--detailed-exitcode")
	var pf struct {
		Plan struct {
			Runs []string `json:"runs"`
			Cuts []struct {
				Name  string   `json:"name"`
				Lines [][2]int `json:"lines"`
			} `json:"cuts"`
		} `json:"plan"`
	}
	if b, err := os.ReadFile(w.path("p.plan")); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &pf); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pf.Plan.Runs, "pol3") || slices.Contains(pf.Plan.Runs, "pol0") || len(pf.Plan.Cuts) != 1 || pf.Plan.Cuts[0].Name != "main.yaml" {
		t.Fatalf("plan file runs %q, cuts %+v: want pol3 run and the other policies cut", pf.Plan.Runs, pf.Plan.Cuts)
	}

	// Edited inside an entry that the apply would not load: refused.
	edited := strings.Replace(spec(changed...), "pol5", "pol5x", 1)
	w.write("main.yaml", edited)
	r := w.must(1, "apply", "p.plan")
	wantStderr(t, r, "specs or config values changed")
	w.write("main.yaml", spec(changed...))

	mark := e.mark()
	r = w.must(0, "apply", "p.plan")
	wantStdout(t, r, "Apply complete!", "0 created, 1 updated")
	wantOutput(t, r, "orgPrincipal", "org:"+e.orgID())
	if got := e.policy(rid(t, "3")); len(got) != 2 {
		t.Errorf("pol3's bindings after apply = %+v, want 2", got)
	}
	var writes []string
	for _, c := range e.callsSince(mark, "/api/v2/restriction_policy/") {
		if c.Method != "GET" {
			writes = append(writes, c.Method+" "+c.Path)
		}
	}
	if len(writes) != 1 || !strings.HasSuffix(writes[0], rid(t, "3")) {
		t.Errorf("apply wrote %q, want pol3 only", writes)
	}
	after := w.stateList()
	for name, e := range before {
		if after[name].ID != e.ID {
			t.Errorf("%s after the apply: %+v, was %+v", name, after[name], e)
		}
	}
	w.must(0, "plan", "--detailed-exitcode")
}
