package github

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ---------------------------------------------------------------------------
// The fake's pull requests, workflows and workflow runs: what the apply on
// merge reads to find the plan reviewed on the pull request it merged.

// planWorkflowID is the id GitHub gives reconcile-plan.yml in the fake.
const planWorkflowID = 161335

// workflowFile is a workflow of the repository, as GitHub lists it.
type workflowFile struct {
	ID   int64
	Path string
}

// branchRef is a pull request's head or base.
type branchRef struct {
	Ref, SHA string
	Repo     string // owner/name
}

// changedFile is a file a pull request changes.
type changedFile struct {
	Name, Previous string // Previous: the name before a rename
}

type pull struct {
	Number                    int
	Head, Base                branchRef
	State                     string // open or closed
	Merged                    bool
	MergeCommitSHA            string
	Created, Closed, MergedAt time.Time // zero when not
	Files                     []changedFile
	BaseChanges               []time.Time
}

// run is a run of a workflow.
type run struct {
	ID                 int64
	Number             int
	WorkflowID         int64
	Path, Event        string
	HeadSHA            string
	HeadBranch         string
	HeadRepo           string // owner/name
	Status, Conclusion string
	Created            time.Time
}

func stamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func repoJSON(fullName string) any {
	if fullName == "" {
		return nil
	}
	owner, name, _ := strings.Cut(fullName, "/")
	return map[string]any{"full_name": fullName, "name": name, "owner": map[string]any{"login": owner}}
}

// json is p as GitHub lists pull requests; full adds what only the
// request of one pull request answers.
func (p *pull) json() map[string]any {
	owner, _, _ := strings.Cut(p.Head.Repo, "/")
	var merge any
	if p.MergeCommitSHA != "" {
		merge = p.MergeCommitSHA
	}
	return map[string]any{
		"number": p.Number, "state": p.State, "merge_commit_sha": merge,
		"created_at": stamp(p.Created), "closed_at": stamp(p.Closed), "merged_at": stamp(p.MergedAt),
		"head": map[string]any{"ref": p.Head.Ref, "sha": p.Head.SHA, "label": owner + ":" + p.Head.Ref, "repo": repoJSON(p.Head.Repo)},
		"base": map[string]any{"ref": p.Base.Ref, "sha": p.Base.SHA, "label": "acme:" + p.Base.Ref, "repo": repoJSON(repo)},
	}
}

func (p *pull) full() map[string]any {
	m := p.json()
	m["merged"] = p.Merged
	m["changed_files"] = len(p.Files)
	return m
}

// runJSON is r as GitHub answers it. Its pull_requests are, as GitHub
// documents them, the open pull requests with its head commit or branch:
// not necessarily the one that started it. g.mu is held.
func (g *fakeGitHub) runJSON(r *run) map[string]any {
	prs := []any{}
	for _, p := range g.prs {
		if p.State == "open" && p.Head.Repo == repo && (p.Head.SHA == r.HeadSHA || p.Head.Ref == r.HeadBranch) {
			prs = append(prs, map[string]any{"number": p.Number,
				"head": map[string]any{"ref": p.Head.Ref, "sha": p.Head.SHA}, "base": map[string]any{"ref": p.Base.Ref, "sha": p.Base.SHA}})
		}
	}
	var conclusion any
	if r.Conclusion != "" {
		conclusion = r.Conclusion
	}
	return map[string]any{
		"id": r.ID, "run_number": r.Number, "run_attempt": 1, "workflow_id": r.WorkflowID, "path": r.Path, "event": r.Event,
		"name": "reconcile plan", "status": r.Status, "conclusion": conclusion,
		"head_sha": r.HeadSHA, "head_branch": r.HeadBranch, "head_repository": repoJSON(r.HeadRepo), "repository": repoJSON(repo),
		"pull_requests": prs, "created_at": stamp(r.Created), "updated_at": stamp(r.Created.Add(3 * time.Minute)),
	}
}

func (g *fakeGitHub) handlePulls(mux *http.ServeMux, base string) {
	mux.HandleFunc("GET "+base+"/commits/{sha}/pulls", g.commitPulls)
	mux.HandleFunc("GET "+base+"/pulls", g.listPulls)
	mux.HandleFunc("GET "+base+"/pulls/{number}", g.getPull)
	mux.HandleFunc("GET "+base+"/pulls/{number}/files", g.pullFiles)
	mux.HandleFunc("GET "+base+"/issues/{number}/events", g.issueEvents)
	mux.HandleFunc("GET "+base+"/actions/workflows/{workflow}", g.getWorkflow)
	mux.HandleFunc("GET "+base+"/actions/workflows/{workflow}/runs", g.workflowRuns)
}

// commitPulls answers as GitHub does: the merged pull request whose merge
// made the commit, and the open ones with the commit as their head.
func (g *fakeGitHub) commitPulls(w http.ResponseWriter, r *http.Request) {
	sha := r.PathValue("sha")
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []map[string]any
	for _, p := range g.prs {
		if p.Merged && p.MergeCommitSHA == sha || p.State == "open" && p.Head.SHA == sha {
			out = append(out, p.json())
		}
	}
	page(w, r, out)
}

func (g *fakeGitHub) pull(w http.ResponseWriter, r *http.Request) *pull {
	n, _ := strconv.Atoi(r.PathValue("number"))
	for _, p := range g.prs {
		if p.Number == n {
			return p
		}
	}
	writeJSON(w, 404, map[string]any{"message": "Not Found"})
	return nil
}

// listPulls filters by state (open by default, or closed, or all) and by
// head (OWNER:BRANCH), newest first.
func (g *fakeGitHub) listPulls(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := cmp(q.Get("state"), "open")
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []map[string]any
	for _, p := range slices.Backward(g.prs) {
		owner, _, _ := strings.Cut(p.Head.Repo, "/")
		if state != "all" && p.State != state || q.Has("head") && q.Get("head") != owner+":"+p.Head.Ref {
			continue
		}
		out = append(out, p.json())
	}
	page(w, r, out)
}

func (g *fakeGitHub) getPull(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p := g.pull(w, r); p != nil {
		writeJSON(w, 200, p.full())
	}
}

// pullFiles lists at most 3,000 files, as GitHub does.
func (g *fakeGitHub) pullFiles(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.pull(w, r)
	if p == nil {
		return
	}
	var out []map[string]any
	for _, f := range p.Files[:min(len(p.Files), 3000)] {
		m := map[string]any{"filename": f.Name, "status": "modified", "additions": 1, "deletions": 1}
		if f.Previous != "" {
			m["status"], m["previous_filename"] = "renamed", f.Previous
		}
		out = append(out, m)
	}
	page(w, r, out)
}

// issueEvents lists a pull request's events: its changes of base among
// others.
func (g *fakeGitHub) issueEvents(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.pull(w, r)
	if p == nil {
		return
	}
	out := []map[string]any{{"id": 1, "event": "labeled", "created_at": stamp(p.Created), "label": map[string]any{"name": "infra"}}}
	for i, at := range p.BaseChanges {
		out = append(out, map[string]any{"id": i + 2, "event": "base_ref_changed", "created_at": stamp(at)})
	}
	if p.Merged {
		out = append(out, map[string]any{"id": 99, "event": "merged", "commit_id": p.MergeCommitSHA, "created_at": stamp(p.MergedAt)})
	}
	page(w, r, out)
}

// workflow finds a workflow by its id or its file's name; g.mu is held.
func (g *fakeGitHub) workflow(w http.ResponseWriter, r *http.Request) *workflowFile {
	key := r.PathValue("workflow")
	for i, wf := range g.workflows {
		if key == strconv.FormatInt(wf.ID, 10) || key == path.Base(wf.Path) {
			return &g.workflows[i]
		}
	}
	writeJSON(w, 404, map[string]any{"message": "Not Found"})
	return nil
}

func (g *fakeGitHub) getWorkflow(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if wf := g.workflow(w, r); wf != nil {
		writeJSON(w, 200, map[string]any{"id": wf.ID, "path": wf.Path, "name": strings.TrimSuffix(path.Base(wf.Path), ".yml"), "state": "active"})
	}
}

// workflowRuns lists a workflow's runs, newest first, filtered by event,
// head_sha and status as GitHub does: an empty filter filters nothing.
func (g *fakeGitHub) workflowRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	g.mu.Lock()
	defer g.mu.Unlock()
	wf := g.workflow(w, r)
	if wf == nil {
		return
	}
	out := []map[string]any{}
	for _, run := range slices.Backward(g.runs) {
		if run.WorkflowID != wf.ID || q.Get("event") != "" && run.Event != q.Get("event") ||
			q.Get("head_sha") != "" && run.HeadSHA != q.Get("head_sha") ||
			q.Get("status") != "" && run.Status != q.Get("status") && run.Conclusion != q.Get("status") {
			continue
		}
		out = append(out, g.runJSON(run))
	}
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	p, _ := strconv.Atoi(q.Get("page"))
	p = max(p, 1)
	lo, hi := min((p-1)*per, len(out)), min(p*per, len(out))
	writeJSON(w, 200, map[string]any{"total_count": len(out), "workflow_runs": out[lo:hi]})
}

// ---------------------------------------------------------------------------
// A repository's history of pull requests and plan runs, a minute a step.

type timeline struct {
	g       *fakeGitHub
	now     time.Time
	nextRun int64
	number  int
}

func newTimeline(g *fakeGitHub) *timeline {
	return &timeline{g: g, now: time.Date(2025, 3, 14, 8, 0, 0, 0, time.UTC), nextRun: 13000000000}
}

func (h *timeline) step() time.Time {
	h.now = h.now.Add(time.Minute)
	return h.now
}

// commit is a made-up commit hash.
func commit(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// open opens pull request number from branch at head into base, changing
// files (infra/main.yaml when none are given).
func (h *timeline) open(number int, branch, head, base string, files ...changedFile) *pull {
	if len(files) == 0 {
		files = []changedFile{{Name: "infra/main.yaml"}}
	}
	p := &pull{Number: number, Head: branchRef{branch, head, repo}, Base: branchRef{base, commit("tip of " + base), repo},
		State: "open", Created: h.step(), Files: files}
	h.g.set(func() { h.g.prs = append(h.g.prs, p) })
	return p
}

// plan is a run of the plan workflow that the pull request's latest event
// started, ended as conclusion ("" while it runs).
func (h *timeline) plan(p *pull, conclusion string) *run {
	return h.add(&run{HeadSHA: p.Head.SHA, HeadBranch: p.Head.Ref, HeadRepo: p.Head.Repo, Conclusion: conclusion})
}

// add adds a run, by default a completed pull_request run of the plan
// workflow in this repository.
func (h *timeline) add(r *run) *run {
	h.number++
	h.nextRun++
	r.ID, r.Number, r.Created = h.nextRun, h.number, h.step()
	r.WorkflowID = cmpOr(r.WorkflowID, planWorkflowID)
	r.Path = cmp(r.Path, ".github/workflows/reconcile-plan.yml")
	r.Event = cmp(r.Event, "pull_request")
	r.HeadRepo = cmp(r.HeadRepo, repo)
	r.Status = "completed"
	if r.Conclusion == "" {
		r.Status = "in_progress"
	}
	h.g.set(func() { h.g.runs = append(h.g.runs, r) })
	return r
}

func cmpOr(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}

func (h *timeline) merge(p *pull, mergeCommit string) {
	at := h.step()
	h.g.set(func() {
		p.State, p.Merged, p.MergeCommitSHA, p.MergedAt, p.Closed = "closed", true, mergeCommit, at, at
	})
}

func (h *timeline) close(p *pull) {
	at := h.step()
	h.g.set(func() { p.State, p.Closed = "closed", at })
}

func (h *timeline) changeBase(p *pull, base string) {
	at := h.step()
	h.g.set(func() {
		p.Base = branchRef{base, commit("tip of " + base), repo}
		p.BaseChanges = append(p.BaseChanges, at)
	})
}

// planRun runs plan-run as the apply on a push to branch does.
func planRun(w *workspace, want int, mergeCommit, branch string) result {
	w.t.Helper()
	return w.step(want, nil, "plan-run", mergeCommit, branch)
}

// wantRun checks that r chose run of pull request pr.
func wantRun(t *testing.T, r result, pr int, head string, chosen *run) {
	t.Helper()
	if want := fmt.Sprintf("pr=%d\nhead_sha=%s\nrun_id=%d\n", pr, head, chosen.ID); r.stdout != want {
		t.Errorf("plan-run printed %q, want %q\n%s", r.stdout, want, r)
	}
}

// wantRefused checks that r applied nothing, saying why.
func wantRefused(t *testing.T, r result, why ...string) {
	t.Helper()
	if r.stdout != "" || r.code == 0 {
		t.Errorf("plan-run chose a plan, want a refusal:\n%s", r)
	}
	for _, s := range why {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("want %q in the refusal:\n%s", s, r)
		}
	}
}

// ---------------------------------------------------------------------------
// The tests

// TestPlanRun: the apply on merge finds the pull request that the pushed
// commit merged into the branch, and the last run of the plan workflow
// made for it: not a fork's run on the same head, nor a run of the
// workflow at another path. It refuses a push that merged no pull request
// into the branch, a last plan that failed, and no plan at all.
func TestPlanRun(t *testing.T) {
	needTools(t)
	t.Parallel()
	gh := newFakeGitHub(t)
	h := newTimeline(gh)
	w := newScriptWorkspace(t, gh)

	h.open(3, "docs", commit("docs"), "main")
	head := commit("feature")
	pr := h.open(7, "feature", head, "main")
	h.plan(pr, "failure")
	good := h.plan(pr, "success")
	h.add(&run{HeadSHA: head, HeadBranch: "feature", HeadRepo: "mallory/infra", Conclusion: "success"})
	h.add(&run{HeadSHA: head, HeadBranch: "feature", Path: ".github/workflows/reconcile-plan.yml@refs/heads/staging", Conclusion: "success"})
	h.merge(pr, commit("merge of 7"))
	r := planRun(w, 0, commit("merge of 7"), "main")
	wantRun(t, r, 7, head, good)
	if !strings.Contains(r.stderr, fmt.Sprintf("the plan of #7 (feature into main, head %s) made by run %d of .github/workflows/reconcile-plan.yml", head, good.ID)) {
		t.Errorf("the log does not say which plan is applied:\n%s", r)
	}

	// A commit pushed without a pull request; the merge of a pull request
	// into staging, pushed to main.
	wantRefused(t, planRun(w, 1, commit("pushed"), "main"), "did not merge a pull request into main")
	hotfix := h.open(9, "hotfix", commit("hotfix"), "staging")
	run9 := h.plan(hotfix, "success")
	h.merge(hotfix, commit("merge of 9"))
	wantRefused(t, planRun(w, 1, commit("merge of 9"), "main"), "did not merge a pull request into main")
	wantRun(t, planRun(w, 0, commit("merge of 9"), "staging"), 9, commit("hotfix"), run9)

	// The last plan failed, or still runs, though one before succeeded.
	for i, conclusion := range []string{"failure", "cancelled", ""} {
		p := h.open(11+i, fmt.Sprintf("retry-%d", i), commit(fmt.Sprint("retry ", i)), "main")
		h.plan(p, "success")
		last := h.plan(p, conclusion)
		h.merge(p, commit(fmt.Sprint("merge of retry ", i)))
		wantRefused(t, planRun(w, 1, commit(fmt.Sprint("merge of retry ", i)), "main"), fmt.Sprintf("the last plan of #%d", 11+i), fmt.Sprintf("run %d", last.ID))
	}

	// No plan at all.
	p := h.open(20, "unplanned", commit("unplanned"), "main")
	h.merge(p, commit("merge of 20"))
	wantRefused(t, planRun(w, 1, commit("merge of 20"), "main"), "no run of .github/workflows/reconcile-plan.yml planned #20")
}

// TestPlanRunSecondPullRequest: a second pull request from the same head
// into another base, that nobody reviews and whose base's plan workflow
// plans a destruction, is planned after the reviewed one. Its plan is never
// taken for the reviewed one's: when its runs cannot be told apart from the
// reviewed one's (the same branch, open at the time) nothing is applied;
// from another branch its runs are not the reviewed one's. A pull request
// from the same branch into the same base, which never changed base, runs
// the same files; one closed long before the reviewed one opened is no
// doubt.
func TestPlanRunSecondPullRequest(t *testing.T) {
	needTools(t)
	t.Parallel()
	gh := newFakeGitHub(t)
	h := newTimeline(gh)
	w := newScriptWorkspace(t, gh)

	// The attack: #8 from the same branch into staging.
	head := commit("feature")
	reviewed := h.open(7, "feature", head, "main")
	h.plan(reviewed, "success")
	unreviewed := h.open(8, "feature", head, "staging")
	h.plan(unreviewed, "success")
	h.merge(reviewed, commit("merge of 7"))
	wantRefused(t, planRun(w, 1, commit("merge of 7"), "main"), "cannot be told apart", "#8, from feature into staging")

	// From another branch at the same head.
	head = commit("feature-b")
	reviewed = h.open(17, "feature-b", head, "main")
	mine := h.plan(reviewed, "success")
	unreviewed = h.open(18, "copy-of-feature-b", head, "staging")
	h.plan(unreviewed, "success")
	h.merge(reviewed, commit("merge of 17"))
	wantRun(t, planRun(w, 0, commit("merge of 17"), "main"), 17, head, mine)

	// From the same branch into the same base: the same files.
	head = commit("feature-c")
	reviewed = h.open(27, "feature-c", head, "main")
	h.plan(reviewed, "success")
	twin := h.open(28, "feature-c", head, "main")
	last := h.plan(twin, "success")
	h.merge(reviewed, commit("merge of 27"))
	wantRun(t, planRun(w, 0, commit("merge of 27"), "main"), 27, head, last)

	// A branch name used again: #35 into staging was closed an hour before
	// #37 opened from a branch of the same name; and #45 into staging was
	// closed a minute before #47 opened, when a run may still be #45's.
	for _, c := range []struct {
		number int
		gap    time.Duration
		ok     bool
	}{{35, time.Hour, true}, {45, 0, false}} {
		branch := fmt.Sprint("reused-", c.number)
		head = commit(branch)
		old := h.open(c.number, branch, head, "staging")
		h.plan(old, "success")
		h.close(old)
		h.now = h.now.Add(c.gap)
		reviewed = h.open(c.number+2, branch, head, "main")
		mine = h.plan(reviewed, "success")
		h.merge(reviewed, commit(fmt.Sprint("merge of ", c.number+2)))
		if c.ok {
			wantRun(t, planRun(w, 0, commit(fmt.Sprint("merge of ", c.number+2)), "main"), c.number+2, head, mine)
		} else {
			wantRefused(t, planRun(w, 1, commit(fmt.Sprint("merge of ", c.number+2)), "main"), "cannot be told apart", fmt.Sprintf("#%d, from %s into staging", c.number, branch))
		}
	}
}

// TestPlanRunBaseChanged: a pull request opened into staging and planned
// there (by staging's plan workflow), then moved to main and merged
// without a plan since: nothing is applied. Planned again after the move,
// that plan is applied.
func TestPlanRunBaseChanged(t *testing.T) {
	needTools(t)
	t.Parallel()
	gh := newFakeGitHub(t)
	h := newTimeline(gh)
	w := newScriptWorkspace(t, gh)

	head := commit("moved")
	p := h.open(7, "moved", head, "staging")
	h.plan(p, "success")
	h.changeBase(p, "main")
	h.merge(p, commit("merge of 7"))
	wantRefused(t, planRun(w, 1, commit("merge of 7"), "main"), "no run of .github/workflows/reconcile-plan.yml planned #7", "while it was open into main")

	head = commit("moved again")
	p = h.open(9, "moved-again", head, "staging")
	h.plan(p, "success")
	h.changeBase(p, "main")
	after := h.plan(p, "success")
	h.merge(p, commit("merge of 9"))
	wantRun(t, planRun(w, 0, commit("merge of 9"), "main"), 9, head, after)
}

// TestPlanRunKitChanged: a pull request that changes the plan workflow or
// the script had its plan made by its own version of them, not by main's:
// nothing is applied. One that changes another workflow is applied.
func TestPlanRunKitChanged(t *testing.T) {
	needTools(t)
	t.Parallel()
	gh := newFakeGitHub(t)
	h := newTimeline(gh)
	w := newScriptWorkspace(t, gh)

	many := make([]changedFile, 3000)
	for i := range many {
		many[i] = changedFile{Name: fmt.Sprintf("infra/policy-%04d.yaml", i)}
	}
	for i, c := range []struct {
		files []changedFile
		ok    bool
		why   string
	}{
		{[]changedFile{{Name: "infra/main.yaml"}, {Name: ".github/workflows/reconcile-plan.yml"}}, false, "changed .github/workflows/reconcile-plan.yml"},
		{[]changedFile{{Name: ".github/reconcile-gh.sh"}, {Name: "infra/main.yaml"}}, false, "changed .github/reconcile-gh.sh"},
		{[]changedFile{{Name: "infra/main.yaml"}, {Name: ".github/workflows/plan.yml", Previous: ".github/workflows/reconcile-plan.yml"}}, false, "changed .github/workflows/reconcile-plan.yml"},
		{many, false, "3,000 files or more"},
		{[]changedFile{{Name: "infra/main.yaml"}, {Name: ".github/workflows/reconcile-apply.yml"}}, true, ""},
	} {
		number := 7 + i
		head := commit(fmt.Sprint("kit ", i))
		p := h.open(number, fmt.Sprint("kit-", i), head, "main", c.files...)
		planned := h.plan(p, "success")
		merge := commit(fmt.Sprint("merge of kit ", i))
		h.merge(p, merge)
		if c.ok {
			wantRun(t, planRun(w, 0, merge, "main"), number, head, planned)
		} else {
			wantRefused(t, planRun(w, 1, merge, "main"), fmt.Sprintf("#%d", number), c.why)
		}
	}
}
