// Package github holds the GitHub Actions kit of reconcile (the workflows
// in workflows/ and the script reconcile-gh.sh they call) and its tests:
// the script's steps run against a fake GitHub API on loopback, with the
// real reconcile binary planning and checking drift on the built-in
// emulator.
package github

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/reconcile-dev/reconcile/resources/emulator/server"
)

const (
	repo   = "acme/infra"
	botID  = "github-actions[bot]"
	stack  = "prod"
	role1  = "role:00000000-0000-0000-0000-000000000001"
	role2  = "role:00000000-0000-0000-0000-000000000002"
	script = "reconcile-gh.sh"
)

var (
	reconcileBin string // built by TestMain
	buildErr     error
	missingTool  string // bash, curl or jq, when one is not installed
)

func TestMain(m *testing.M) {
	flag.Parse()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			missingTool = tool
		}
	}
	var dir string
	if !testing.Short() && missingTool == "" {
		dir, buildErr = os.MkdirTemp("", "reconcile-kit-bin-")
		if buildErr == nil {
			reconcileBin = filepath.Join(dir, "reconcile")
			buildErr = build(reconcileBin)
		}
	}
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// build builds the reconcile binary with the toolchain running the tests.
func build(out string) error {
	gocmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gocmd); err != nil {
		gocmd = "go"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, err := exec.CommandContext(ctx, gocmd, "build", "-o", out, "github.com/reconcile-dev/reconcile/cmd/reconcile").CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build: %v\n%s", err, b)
	}
	return nil
}

func needTools(t *testing.T) {
	t.Helper()
	switch {
	case testing.Short():
		t.Skip("runs the reconcile binary and the kit's script: skipped in -short mode")
	case missingTool != "":
		t.Skipf("the kit's script needs %s, which is not installed (GitHub's runners have it)", missingTool)
	case buildErr != nil:
		t.Fatalf("building reconcile: %v", buildErr)
	}
}

// ---------------------------------------------------------------------------
// The fake GitHub API: the endpoints the script calls, with GitHub's
// paths, shapes and status codes, holding issues, comments and labels.

type user struct {
	Login string `json:"login"`
}

type comment struct {
	ID      int64  `json:"id"`
	Issue   int    `json:"-"`
	Body    string `json:"body"`
	User    user   `json:"user"`
	HTMLURL string `json:"html_url"`
}

type label struct {
	Name        string `json:"name"`
	Color       string `json:"color"`
	Description string `json:"description"`
}

type issue struct {
	Number      int            `json:"number"`
	Title       string         `json:"title"`
	Body        string         `json:"body"`
	State       string         `json:"state"`
	StateReason string         `json:"state_reason,omitempty"`
	Labels      []label        `json:"labels"`
	User        user           `json:"user"`
	PullRequest map[string]any `json:"pull_request,omitempty"`
	HTMLURL     string         `json:"html_url"`
}

// call is one request the fake served.
type call struct {
	Method, Path string
	Status       int
}

type fakeGitHub struct {
	t     *testing.T
	URL   string
	token string

	mu       sync.Mutex
	calls    []call
	comments []*comment
	issues   []*issue
	labels   []label
	nextID   int64
	// prs, workflows and runs answer the plan-run lookups (planrun_test.go).
	prs       []*pull
	workflows []workflowFile
	runs      []*run
	// refuse, when set, makes calls of that method answer 403.
	refuse string
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	t.Helper()
	g := &fakeGitHub{t: t, token: "ghs_" + randHex(t, 18), nextID: 1000, workflows: []workflowFile{
		{ID: planWorkflowID, Path: ".github/workflows/reconcile-plan.yml"},
		{ID: planWorkflowID + 1, Path: ".github/workflows/reconcile-apply.yml"},
	}}
	mux := http.NewServeMux()
	base := "/repos/" + repo
	mux.HandleFunc("GET "+base+"/issues/{number}/comments", g.listComments)
	mux.HandleFunc("POST "+base+"/issues/{number}/comments", g.createComment)
	mux.HandleFunc("PATCH "+base+"/issues/comments/{id}", g.updateComment)
	mux.HandleFunc("GET "+base+"/issues", g.listIssues)
	mux.HandleFunc("POST "+base+"/issues", g.createIssue)
	mux.HandleFunc("PATCH "+base+"/issues/{number}", g.updateIssue)
	mux.HandleFunc("GET "+base+"/labels/{name}", g.getLabel)
	mux.HandleFunc("POST "+base+"/labels", g.createLabel)
	g.handlePulls(mux, base)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		defer func() {
			g.mu.Lock()
			g.calls = append(g.calls, call{r.Method, r.URL.Path, rec.status})
			g.mu.Unlock()
		}()
		// As GitHub: a missing or wrong token is 401; the script must ask
		// for the v3 JSON and name the API version.
		if r.Header.Get("Authorization") != "Bearer "+g.token {
			writeJSON(rec, 401, map[string]any{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})
			return
		}
		if r.Header.Get("Accept") != "application/vnd.github+json" || r.Header.Get("X-GitHub-Api-Version") != "2022-11-28" {
			g.t.Errorf("%s %s: Accept %q, X-GitHub-Api-Version %q", r.Method, r.URL, r.Header.Get("Accept"), r.Header.Get("X-GitHub-Api-Version"))
		}
		if r.Method != http.MethodGet && r.Header.Get("Content-Type") != "application/json" {
			g.t.Errorf("%s %s: Content-Type %q", r.Method, r.URL, r.Header.Get("Content-Type"))
		}
		g.mu.Lock()
		refused := g.refuse == r.Method
		g.mu.Unlock()
		if refused {
			writeJSON(rec, 403, map[string]any{"message": "Resource not accessible by integration"})
			return
		}
		mux.ServeHTTP(rec, r)
	}))
	t.Cleanup(srv.Close)
	g.URL = srv.URL
	return g
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// page answers one page of list, as GitHub pages lists (per_page at most
// 100, default 30; page from 1).
func page[T any](w http.ResponseWriter, r *http.Request, list []T) {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	p, _ := strconv.Atoi(r.URL.Query().Get("page"))
	p = max(p, 1)
	lo, hi := min((p-1)*per, len(list)), min(p*per, len(list))
	writeJSON(w, 200, append([]T{}, list[lo:hi]...))
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeJSON(w, 400, map[string]any{"message": "Problems parsing JSON: " + err.Error()})
		return false
	}
	return true
}

func (g *fakeGitHub) listComments(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("number"))
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []comment
	for _, c := range g.comments {
		if c.Issue == n {
			out = append(out, *c)
		}
	}
	page(w, r, out)
}

func (g *fakeGitHub) createComment(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("number"))
	var in struct {
		Body string `json:"body"`
	}
	if !decode(w, r, &in) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.addComment(n, botID, in.Body)
	writeJSON(w, 201, c)
}

// addComment adds a comment by login; g.mu is held.
func (g *fakeGitHub) addComment(n int, login, body string) *comment {
	g.nextID++
	c := &comment{ID: g.nextID, Issue: n, Body: body, User: user{login}, HTMLURL: fmt.Sprintf("https://github.example/%s/pull/%d#issuecomment-%d", repo, n, g.nextID)}
	g.comments = append(g.comments, c)
	return c
}

func (g *fakeGitHub) updateComment(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var in struct {
		Body string `json:"body"`
	}
	if !decode(w, r, &in) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.comments {
		if c.ID == id {
			if c.User.Login != botID {
				writeJSON(w, 403, map[string]any{"message": "You must have write access to edit this comment"})
				return
			}
			c.Body = in.Body
			writeJSON(w, 200, c)
			return
		}
	}
	writeJSON(w, 404, map[string]any{"message": "Not Found"})
}

func (g *fakeGitHub) listIssues(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []issue
	for _, is := range g.issues {
		if st := q.Get("state"); st != "all" && is.State != cmp(st, "open") {
			continue
		}
		if l := q.Get("labels"); l != "" && !slices.ContainsFunc(is.Labels, func(x label) bool { return x.Name == l }) {
			continue
		}
		out = append(out, *is)
	}
	page(w, r, out)
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (g *fakeGitHub) createIssue(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title  string   `json:"title"`
		Body   string   `json:"body"`
		Labels []string `json:"labels"`
	}
	if !decode(w, r, &in) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	is := g.addIssue(botID, in.Title, in.Body)
	for _, name := range in.Labels {
		// As GitHub does when the label is missing and cannot be made:
		// the issue is created without it.
		for _, l := range g.labels {
			if l.Name == name {
				is.Labels = append(is.Labels, l)
			}
		}
	}
	writeJSON(w, 201, is)
}

// addIssue adds an open issue by login; g.mu is held.
func (g *fakeGitHub) addIssue(login, title, body string) *issue {
	n := len(g.issues) + 1
	is := &issue{Number: n, Title: title, Body: body, State: "open", Labels: []label{}, User: user{login},
		HTMLURL: fmt.Sprintf("https://github.example/%s/issues/%d", repo, n)}
	g.issues = append(g.issues, is)
	return is
}

func (g *fakeGitHub) updateIssue(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("number"))
	var in struct {
		Body        *string `json:"body"`
		State       *string `json:"state"`
		StateReason *string `json:"state_reason"`
	}
	if !decode(w, r, &in) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if n < 1 || n > len(g.issues) {
		writeJSON(w, 404, map[string]any{"message": "Not Found"})
		return
	}
	is := g.issues[n-1]
	if in.Body != nil {
		is.Body = *in.Body
	}
	if in.State != nil {
		if *in.State != "open" && *in.State != "closed" {
			writeJSON(w, 422, map[string]any{"message": "Validation Failed"})
			return
		}
		is.State = *in.State
	}
	if in.StateReason != nil {
		is.StateReason = *in.StateReason
	}
	writeJSON(w, 200, is)
}

func (g *fakeGitHub) getLabel(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, l := range g.labels {
		if l.Name == r.PathValue("name") {
			writeJSON(w, 200, l)
			return
		}
	}
	writeJSON(w, 404, map[string]any{"message": "Not Found"})
}

func (g *fakeGitHub) createLabel(w http.ResponseWriter, r *http.Request) {
	var in label
	if !decode(w, r, &in) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.labels = append(g.labels, in)
	writeJSON(w, 201, in)
}

// count returns how many calls of method on a path matching the pattern
// (an exact path, or a prefix ending in "/") were served.
func (g *fakeGitHub) count(method, path string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, c := range g.calls {
		if c.Method == method && (c.Path == path || strings.HasSuffix(path, "/") && strings.HasPrefix(c.Path, path)) {
			n++
		}
	}
	return n
}

// set changes the fake's data under its lock: the requests of the script,
// another process, reach the handlers by no path the race detector sees.
func (g *fakeGitHub) set(fn func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	fn()
}

func (g *fakeGitHub) totalCalls() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.calls)
}

// ---------------------------------------------------------------------------
// The user's repository: specs, the reconcile binary on the emulator, and
// the script as a workflow step runs it.

type workspace struct {
	t    *testing.T
	dir  string
	gh   *fakeGitHub
	emu  *server.Server
	runs []result
}

type result struct {
	args           []string
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("%s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

func newWorkspace(t *testing.T, gh *fakeGitHub) *workspace {
	t.Helper()
	// The emulator's Datadog user is in role1.
	seed := filepath.Join(t.TempDir(), "seed.json")
	if err := os.WriteFile(seed, []byte(`{"datadog": {"user": {"roleId": "00000000-0000-0000-0000-000000000001"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	emu, err := server.Start(server.Options{DataDir: t.TempDir(), SeedFile: seed})
	if err != nil {
		t.Fatalf("start the emulator: %v", err)
	}
	t.Cleanup(func() { emu.Close() })
	w := newScriptWorkspace(t, gh)
	w.emu = emu
	return w
}

// newScriptWorkspace is a workspace for the script's steps alone, with no
// emulator for reconcile.
func newScriptWorkspace(t *testing.T, gh *fakeGitHub) *workspace {
	t.Helper()
	w := &workspace{t: t, dir: t.TempDir(), gh: gh}
	if err := os.MkdirAll(filepath.Join(w.dir, "infra"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.checkToken)
	return w
}

// env is a step's environment as GitHub Actions gives it, on loopback.
func (w *workspace) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GITHUB_") || strings.HasPrefix(k, "RECONCILE_") || strings.HasPrefix(k, "DD_") ||
			strings.HasPrefix(k, "OCI_") || strings.HasPrefix(k, "GOOGLE_") || k == "HOME" || k == "NO_COLOR" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+w.dir, "NO_COLOR=1",
		"GITHUB_API_URL="+w.gh.URL, "GITHUB_REPOSITORY="+repo, "GITHUB_TOKEN="+w.gh.token,
		"GITHUB_SERVER_URL=https://github.example", "GITHUB_RUN_ID=4242", "GITHUB_SHA="+strings.Repeat("5", 40),
		"RECONCILE_GH_KEY="+stack)
}

func (w *workspace) write(name, text string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.dir, "infra", name), []byte(text), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *workspace) read(name string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.dir, "infra", name))
	if err != nil {
		w.t.Fatal(err)
	}
	return string(b)
}

// exec runs name with args in infra/, with extra environment variables,
// and returns what it did.
func (w *workspace) exec(extra []string, name string, args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = filepath.Join(w.dir, "infra")
	cmd.Env = append(w.env(), extra...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	r := result{args: append([]string{filepath.Base(name)}, args...), stdout: so.String(), stderr: se.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("run %s: %v", name, err)
	}
	if ctx.Err() != nil {
		w.t.Fatalf("%s did not end in time:\n%s", name, r)
	}
	w.runs = append(w.runs, r)
	if testing.Verbose() {
		w.t.Logf("%s", r)
	}
	return r
}

// reconcile runs the binary on the workspace's emulator; it fails the
// test unless the exit status is want.
func (w *workspace) reconcile(want int, args ...string) result {
	w.t.Helper()
	r := w.exec(nil, reconcileBin, append(args, "--emulator="+w.emu.URL)...)
	if r.code != want {
		w.t.Fatalf("want exit %d:\n%s", want, r)
	}
	return r
}

// step runs a step of the script; it fails the test unless the exit status
// is want.
func (w *workspace) step(want int, extra []string, args ...string) result {
	w.t.Helper()
	path, err := filepath.Abs(script)
	if err != nil {
		w.t.Fatal(err)
	}
	r := w.exec(extra, "bash", append([]string{path}, args...)...)
	if r.code != want {
		w.t.Fatalf("want exit %d:\n%s", want, r)
	}
	return r
}

// checkToken fails the test if any output of the script or of reconcile
// holds the token.
func (w *workspace) checkToken() {
	for _, r := range w.runs {
		if strings.Contains(r.stdout+r.stderr, w.gh.token) {
			w.t.Errorf("the output of %s holds the token:\n%s", strings.Join(r.args, " "), r)
		}
	}
}

// policies is a spec of restriction policies on dashboards, each giving
// one relation to role2 and editor to role1, the caller's role (Datadog
// refuses a policy that takes the caller's own access away).
func policies(ps ...string) string {
	var b strings.Builder
	b.WriteString("resources:\n")
	for _, p := range ps {
		name, relation, _ := strings.Cut(p, "=")
		fmt.Fprintf(&b, "  %s:\n    type: datadog:RestrictionPolicy\n    properties:\n      resourceId: dashboard:kit-%s\n      bindings:\n        - relation: editor\n          principals: [%q]\n        - relation: %s\n          principals: [%q]\n",
			name, name, role1, relation, role2)
	}
	return b.String()
}

// setPolicy changes a policy in the emulator as a person in Datadog's UI
// would: out of band.
func (w *workspace) setPolicy(rid, relation, principal string) {
	w.t.Helper()
	body, _ := json.Marshal(map[string]any{"data": map[string]any{"id": rid, "type": "restriction_policy",
		"attributes": map[string]any{"bindings": []any{map[string]any{"relation": relation, "principals": []string{principal}}}}}})
	// As another user would: the emulator's own user may lose access.
	req, err := http.NewRequest("POST", w.emu.URL+"/api/v2/restriction_policy/"+rid+"?allow_self_lockout=true", bytes.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	env := server.Env(w.emu.Creds)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("DD-API-KEY", env["DD_API_KEY"])
	req.Header.Set("DD-APPLICATION-KEY", env["DD_APP_KEY"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		w.t.Fatalf("change the policy %s: %s", rid, resp.Status)
	}
}

func randHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// ---------------------------------------------------------------------------
// The tests

// TestStickyPlanComment pushes three versions of the specs to a pull
// request that already holds 150 comments (one a person's quoting the
// marker, one another bot's): each push plans with reconcile, renders the
// plan with 'reconcile show --output markdown' and runs the comment step.
// The first push creates reconcile's comment, the next two update that
// one; nothing else is touched.
func TestStickyPlanComment(t *testing.T) {
	needTools(t)
	t.Parallel()
	gh := newFakeGitHub(t)
	const pr = 7
	marker := "<!-- reconcile-gh:plan:" + stack + " -->"
	gh.mu.Lock()
	for i := range 150 {
		body := fmt.Sprintf("review comment %d", i)
		if i == 3 {
			body = "copied from the bot: " + marker + " plan"
		}
		gh.addComment(pr, "alice", body)
	}
	other := gh.addComment(pr, botID, "a comment of another workflow")
	gh.mu.Unlock()
	w := newWorkspace(t, gh)

	pushes := []string{
		policies("web=viewer"),
		policies("web=viewer", "api=editor"),
		policies("web=editor", "api=editor", "ops=viewer"),
	}
	var last string
	for i, specs := range pushes {
		w.write("main.yaml", specs)
		w.reconcile(2, "plan", "--out", "plan.bin", "--detailed-exitcode")
		r := w.exec(nil, reconcileBin, "show", "plan.bin", "--output", "markdown")
		if r.code != 0 {
			t.Fatalf("show:\n%s", r)
		}
		w.write("comment.md", r.stdout)
		last = r.stdout
		commit := strings.Repeat(strconv.Itoa(i+1), 40)
		out := w.step(0, []string{"RECONCILE_GH_COMMIT=" + commit}, "comment", strconv.Itoa(pr), "comment.md")
		want := "Updated the plan comment on #7"
		if i == 0 {
			want = "Commented the plan on #7"
		}
		if !strings.Contains(out.stdout, want) {
			t.Errorf("push %d: want %q in:\n%s", i+1, want, out)
		}
	}

	if n := gh.count("POST", "/repos/"+repo+"/issues/7/comments"); n != 1 {
		t.Errorf("%d comments created, want 1", n)
	}
	if n := gh.count("PATCH", "/repos/"+repo+"/issues/comments/"); n != 2 {
		t.Errorf("%d comment updates, want 2", n)
	}
	gh.mu.Lock()
	defer gh.mu.Unlock()
	var mine []*comment
	for _, c := range gh.comments {
		if c.User.Login == botID && strings.Contains(c.Body, marker) {
			mine = append(mine, c)
		}
	}
	if len(mine) != 1 {
		t.Fatalf("%d comments of reconcile on the pull request, want 1", len(mine))
	}
	body := mine[0].Body
	if !strings.HasPrefix(body, marker+"\n") || !strings.Contains(body, last) || !strings.Contains(body, "ops") ||
		!strings.Contains(body, "at "+strings.Repeat("3", 12)) || !strings.Contains(body, "[run](https://github.example/"+repo+"/actions/runs/4242)") {
		t.Errorf("the comment after the third push:\n%s\nwant the marker, the third plan, its commit and the run", body)
	}
	if gh.comments[3].Body != "copied from the bot: "+marker+" plan" || other.Body != "a comment of another workflow" {
		t.Errorf("comments not reconcile's were changed: %q, %q", gh.comments[3].Body, other.Body)
	}
	if len(gh.comments) != 152 {
		t.Errorf("%d comments, want the 151 there were and reconcile's", len(gh.comments))
	}
}

// TestDriftIssue runs reconcile drift on the emulator and the drift-issue
// step after it, as the cron workflow does: no drift and no issue does
// nothing; drift opens one issue (making its label); drift that persists
// updates that issue, never a second; no drift closes it with a comment;
// drift later opens a new one. An error of drift (exit 1) touches nothing.
func TestDriftIssue(t *testing.T) {
	needTools(t)
	t.Parallel()
	gh := newFakeGitHub(t)
	marker := "<!-- reconcile-gh:drift:" + stack + " -->"
	gh.mu.Lock()
	gh.labels = append(gh.labels, label{Name: "bug"})
	spoof := gh.addIssue("mallory", "Drift in stack prod", marker+" looks like the bot's")
	gh.mu.Unlock()
	w := newWorkspace(t, gh)
	w.write("main.yaml", policies("web=viewer", "api=editor"))
	w.reconcile(0, "apply", "--auto-approve")

	drift := func(want int) int {
		t.Helper()
		r := w.exec(nil, reconcileBin, "drift", "--output", "markdown", "--emulator="+w.emu.URL)
		if r.code != want {
			t.Fatalf("drift: want exit %d:\n%s", want, r)
		}
		w.write("drift.md", r.stdout)
		return r.code
	}
	report := func(status int) result {
		t.Helper()
		return w.step(0, nil, "drift-issue", strconv.Itoa(status), "drift.md")
	}
	openIssues := func() []issue {
		gh.mu.Lock()
		defer gh.mu.Unlock()
		var out []issue
		for _, is := range gh.issues {
			if is.State == "open" && is.User.Login == botID {
				out = append(out, *is)
			}
		}
		return out
	}

	r := report(drift(0))
	if !strings.Contains(r.stdout, "nothing to do") || len(openIssues()) != 0 || gh.count("POST", "/repos/"+repo+"/issues") != 0 {
		t.Errorf("no drift, no issue: %s", r)
	}

	w.setPolicy("dashboard:kit-web", "editor", role2)
	r = report(drift(2))
	open := openIssues()
	if len(open) != 1 || !strings.Contains(r.stdout, fmt.Sprintf("Drift: opened #%d", open[0].Number)) {
		t.Fatalf("drift: open issues %+v after:\n%s", open, r)
	}
	first := open[0]
	if first.Title != "Drift in stack prod" || len(first.Labels) != 1 || first.Labels[0].Name != "reconcile-drift" ||
		!strings.HasPrefix(first.Body, marker+"\n") || !strings.Contains(first.Body, "kit-web") || strings.Contains(first.Body, "kit-api") {
		t.Errorf("the drift issue: %+v", first)
	}
	if gh.count("POST", "/repos/"+repo+"/labels") != 1 {
		t.Errorf("the label was not made")
	}

	// The drift persists, and grows: the same issue says so.
	w.setPolicy("dashboard:kit-api", "viewer", role2)
	r = report(drift(2))
	open = openIssues()
	if len(open) != 1 || open[0].Number != first.Number || !strings.Contains(open[0].Body, "kit-api") ||
		!strings.Contains(r.stdout, fmt.Sprintf("updated #%d", first.Number)) {
		t.Errorf("persisting drift: open issues %+v after:\n%s", open, r)
	}
	if n := gh.count("POST", "/repos/"+repo+"/issues"); n != 1 {
		t.Errorf("%d issues created, want 1", n)
	}

	// An error of drift leaves the issue alone, and fails the job.
	before := gh.totalCalls()
	r = w.step(1, nil, "drift-issue", "1", "drift.md")
	if !strings.Contains(r.stderr, "reconcile drift exited 1") || gh.totalCalls() != before {
		t.Errorf("drift's error: %d calls made after:\n%s", gh.totalCalls()-before, r)
	}

	// The drift is undone: the issue is closed.
	w.reconcile(0, "apply", "--auto-approve")
	r = report(drift(0))
	gh.mu.Lock()
	closed := *gh.issues[first.Number-1]
	var notes []string
	for _, c := range gh.comments {
		if c.Issue == first.Number {
			notes = append(notes, c.Body)
		}
	}
	gh.mu.Unlock()
	if closed.State != "closed" || closed.StateReason != "completed" || len(notes) != 1 || !strings.Contains(notes[0], "No drift any more") ||
		!strings.Contains(r.stdout, fmt.Sprintf("closed #%d", first.Number)) {
		t.Errorf("no drift: issue %+v, comments %q after:\n%s", closed, notes, r)
	}
	r = report(drift(0))
	if !strings.Contains(r.stdout, "nothing to do") {
		t.Errorf("no drift again: %s", r)
	}

	// Drift again: a new issue.
	w.setPolicy("dashboard:kit-web", "editor", role2)
	report(drift(2))
	if open = openIssues(); len(open) != 1 || open[0].Number == first.Number {
		t.Errorf("new drift: open issues %+v, want a new one", open)
	}
	gh.mu.Lock()
	if spoof.State != "open" || spoof.Body != marker+" looks like the bot's" {
		t.Errorf("another user's issue quoting the marker was changed: %+v", spoof)
	}
	gh.mu.Unlock()
}

// TestScriptErrors: a missing or refused token and a refused call fail the
// step with GitHub's message, never the token; a body over GitHub's limit
// is cut.
func TestScriptErrors(t *testing.T) {
	needTools(t)
	t.Parallel()
	gh := newFakeGitHub(t)
	w := newWorkspace(t, gh)
	w.write("comment.md", "### plan\n")

	r := w.step(1, []string{"GITHUB_TOKEN="}, "comment", "7", "comment.md")
	if !strings.Contains(r.stderr, "GITHUB_TOKEN is not set") || gh.totalCalls() != 0 {
		t.Errorf("no token: %d calls after:\n%s", gh.totalCalls(), r)
	}
	wrong := "ghs_" + randHex(t, 18)
	r = w.step(1, []string{"GITHUB_TOKEN=" + wrong}, "comment", "7", "comment.md")
	if !strings.Contains(r.stderr, "HTTP 401: Bad credentials") || strings.Contains(r.stdout+r.stderr, wrong) {
		t.Errorf("a wrong token:\n%s", r)
	}
	r = w.step(1, []string{"GITHUB_TOKEN=not a token\"\nheader = \"X: y"}, "comment", "7", "comment.md")
	if !strings.Contains(r.stderr, "does not look like a GitHub token") || strings.Contains(r.stderr, "not a token") {
		t.Errorf("a token that is not one:\n%s", r)
	}

	gh.set(func() { gh.refuse = "POST" })
	r = w.step(1, nil, "comment", "7", "comment.md")
	if !strings.Contains(r.stderr, "POST /repos/"+repo+"/issues/7/comments: HTTP 403: Resource not accessible by integration") {
		t.Errorf("a refused comment:\n%s", r)
	}
	gh.set(func() { gh.refuse = "" })

	big := strings.Repeat("| `node` | update |\n", 5000) // 100,000 bytes
	w.write("comment.md", big)
	w.step(0, nil, "comment", "7", "comment.md")
	gh.mu.Lock()
	body := gh.comments[len(gh.comments)-1].Body
	gh.mu.Unlock()
	if len([]rune(body)) > 65536 || !strings.Contains(body, "Cut at 60000 of 100000 bytes") {
		t.Errorf("a body of 100,000 bytes was posted as %d characters:\n%s", len([]rune(body)), body[len(body)-300:])
	}
	for _, args := range [][]string{{"comment", "x7", "comment.md"}, {"drift-issue", "2", "missing.md"}, {"plan-run", "main"}, {"plan-run", strings.Repeat("a", 40)}, {"plan-run", strings.Repeat("a", 40), "a b"}, {"nonsense"}} {
		if r := w.step(1, nil, args...); r.stderr == "" {
			t.Errorf("%v: no message", args)
		}
	}
}

// workflow is what TestWorkflowsFit reads of a workflow file.
type workflow struct {
	On          map[string]any    `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Jobs        map[string]struct {
		Steps []struct {
			Name string            `yaml:"name"`
			ID   string            `yaml:"id"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func readWorkflow(t *testing.T, name string) workflow {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	var w workflow
	if err := yaml.Unmarshal(b, &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(w.Jobs) != 1 {
		t.Fatalf("%s: %d jobs, want 1", name, len(w.Jobs))
	}
	return w
}

// TestWorkflowsFit checks that the pieces of the kit fit together (actionlint
// checks each workflow alone): the apply fetches the artifact the plan saves,
// from the run the script finds of the plan workflow by its file name; each
// workflow calls the script's steps that exist, with the permissions they
// need and no more.
func TestWorkflowsFit(t *testing.T) {
	t.Parallel()
	plan, apply, drift := readWorkflow(t, "reconcile-plan.yml"), readWorkflow(t, "reconcile-apply.yml"), readWorkflow(t, "reconcile-drift.yml")
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "plan_workflow=${RECONCILE_GH_PLAN_WORKFLOW:-reconcile-plan.yml}") {
		t.Errorf("the script does not look for the runs of reconcile-plan.yml by default")
	}
	runs := func(w workflow) string {
		var b strings.Builder
		for _, j := range w.Jobs {
			for _, s := range j.Steps {
				b.WriteString(s.Run + "\n")
			}
		}
		return b.String()
	}
	with := func(w workflow, uses string) map[string]string {
		for _, j := range w.Jobs {
			for _, s := range j.Steps {
				if strings.HasPrefix(s.Uses, uses+"@") {
					return s.With
				}
			}
		}
		t.Fatalf("no step uses %s", uses)
		return nil
	}
	for _, c := range []struct {
		name  string
		w     workflow
		event string
		perms map[string]string
		calls []string
	}{
		{"plan", plan, "pull_request", map[string]string{"contents": "read", "pull-requests": "write"},
			[]string{`reconcile plan --out plan.bin`, `reconcile show plan.bin --output markdown > comment.md`, `/.github/reconcile-gh.sh" comment "$PR" comment.md`}},
		{"apply", apply, "push", map[string]string{"contents": "read", "actions": "read", "pull-requests": "read", "issues": "read"},
			[]string{`/.github/reconcile-gh.sh" plan-run "$GITHUB_SHA" "$GITHUB_REF_NAME" >> "$GITHUB_OUTPUT"`, `reconcile apply plan.bin --lock-timeout 10m --output jsonl`}},
		{"drift", drift, "schedule", map[string]string{"contents": "read", "issues": "write"},
			[]string{`reconcile drift --output markdown > drift.md || status=$?`, `/.github/reconcile-gh.sh" drift-issue "$status" drift.md`}},
	} {
		if _, ok := c.w.On[c.event]; !ok {
			t.Errorf("%s: not run on %s", c.name, c.event)
		}
		if fmt.Sprint(c.w.Permissions) != fmt.Sprint(c.perms) {
			t.Errorf("%s: permissions %v, want %v", c.name, c.w.Permissions, c.perms)
		}
		for _, call := range c.calls {
			if !strings.Contains(runs(c.w), call) {
				t.Errorf("%s: no step runs %s", c.name, call)
			}
		}
	}
	// The plan plans pull requests into the branch the apply applies on.
	branches := func(w workflow, event string) string {
		on, _ := w.On[event].(map[string]any)
		return fmt.Sprint(on["branches"])
	}
	if b := branches(plan, "pull_request"); b == "<nil>" || b != branches(apply, "push") {
		t.Errorf("the plan runs on pull requests into %s, the apply on pushes to %s", b, branches(apply, "push"))
	}
	up, down := with(plan, "actions/upload-artifact"), with(apply, "actions/download-artifact")
	if up["name"] != "plan-${{ github.event.pull_request.head.sha }}" || up["path"] != "infra/plan.bin" ||
		down["name"] != "plan-${{ steps.reviewed.outputs.head_sha }}" || down["run-id"] != "${{ steps.reviewed.outputs.run_id }}" || down["path"] != "infra" {
		t.Errorf("the apply does not fetch what the plan saved: upload %v, download %v", up, down)
	}
}

// TestWorkflowsInstallPinned: the three workflows install one release of
// reconcile, set once at the top of each (the same in all three, as the
// apply runs the plan's file), with the kit's install step, before any
// step runs reconcile. None installs it another way, and no file of the
// kit names a placeholder host.
func TestWorkflowsInstallPinned(t *testing.T) {
	t.Parallel()
	const step = `"$GITHUB_WORKSPACE/.github/reconcile-gh.sh" install "$RECONCILE_VERSION" "$RUNNER_TEMP/bin"`
	tag := regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
	sum := regexp.MustCompile(`^([0-9a-f]{64})?$`)
	runsReconcile := regexp.MustCompile(`(?m)(^|[|;&(]\s*|\s)reconcile\s`)
	pins := map[string]bool{}
	for _, name := range []string{"reconcile-plan.yml", "reconcile-apply.yml", "reconcile-drift.yml"} {
		w := readWorkflow(t, name)
		v, okV := w.Env["RECONCILE_VERSION"]
		d, okD := w.Env["RECONCILE_SHA256"]
		if !okV || !okD || !tag.MatchString(v) || !sum.MatchString(d) {
			t.Errorf("%s: env RECONCILE_VERSION %q (set: %v), RECONCILE_SHA256 %q (set: %v); want a release tag and a SHA-256 or \"\"", name, v, okV, d, okD)
		}
		pins[v+" "+d] = true
		for job, j := range w.Jobs {
			installed := -1
			for i, s := range j.Steps {
				switch {
				case strings.Contains(s.Run, "go install") || strings.HasPrefix(s.Uses, "actions/setup-go@"):
					t.Errorf("%s: step %q installs reconcile with Go", name, cmp(s.Name, s.Uses))
				case strings.TrimSpace(s.Run) == step:
					if installed >= 0 {
						t.Errorf("%s: reconcile is installed twice", name)
					}
					installed = i
				case runsReconcile.MatchString(s.Run) && installed < 0:
					t.Errorf("%s: step %q runs reconcile before it is installed", name, cmp(s.Name, s.ID))
				}
			}
			if installed < 0 {
				t.Errorf("%s: job %s has no step running %s", name, job, step)
			}
		}
	}
	if len(pins) != 1 {
		t.Errorf("the workflows pin different releases: %v", slices.Sorted(maps.Keys(pins)))
	}

	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "release_url=${RECONCILE_RELEASE_URL:-https://github.com/reconcile-dev/reconcile/releases/download}") {
		t.Errorf("the script does not install from the project's releases on GitHub by default")
	}
	placeholder := regexp.MustCompile(`[A-Za-z0-9-]+\.(example|invalid|test)\b`)
	err = filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if m := placeholder.FindAll(b, -1); m != nil {
			t.Errorf("%s names placeholder hosts: %q", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWorkflowsRequireState: every job checks, before it runs reconcile,
// that RECONCILE_STATE and RECONCILE_STACK are set, and stops otherwise:
// without them reconcile would take the state that the checkout's
// Pulumi.yaml names, which a pull request can change.
func TestWorkflowsRequireState(t *testing.T) {
	t.Parallel()
	runsReconcile := regexp.MustCompile(`(?m)(^|[|;&(]\s*|\s)reconcile\s`)
	run := func(script string, env ...string) error {
		cmd := exec.Command("bash", "-e", "-c", script)
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
		return cmd.Run()
	}
	for _, name := range []string{"reconcile-plan.yml", "reconcile-apply.yml", "reconcile-drift.yml"} {
		w := readWorkflow(t, name)
		for job, j := range w.Jobs {
			checked := false
			for _, s := range j.Steps {
				if runsReconcile.MatchString(s.Run) {
					break
				}
				if strings.Contains(s.Run, "RECONCILE_STATE") && s.Run != "" {
					empty := run(s.Run, "RECONCILE_STATE=", "RECONCILE_STACK=prod")
					set := run(s.Run, "RECONCILE_STATE=etcd://10.0.0.5:2379/reconcile/acme", "RECONCILE_STACK=prod")
					checked = empty != nil && set == nil
				}
			}
			if !checked {
				t.Errorf("%s: job %s runs reconcile without first stopping when RECONCILE_STATE is empty", name, job)
			}
		}
	}
}
