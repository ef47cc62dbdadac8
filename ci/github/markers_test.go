package github

import (
	"strconv"
	"strings"
	"testing"
)

// TestCommentMarkersPerStack: two stacks in one repository comment on the
// same pull request. A value of the dev stack's specs holds the prod
// stack's hidden marker, which reconcile's plan shows in the dev comment;
// a person and another bot wrote comments that open with that marker. Each
// stack's runs find their own comment, by the bot, with their marker as
// its first line: prod's run never overwrites dev's plan, nor anyone
// else's comment.
func TestCommentMarkersPerStack(t *testing.T) {
	needTools(t)
	t.Parallel()
	gh := newFakeGitHub(t)
	const pr = 7
	devMarker, prodMarker := "<!-- reconcile-gh:plan:dev -->", "<!-- reconcile-gh:plan:prod -->"
	gh.mu.Lock()
	alice := gh.addComment(pr, "alice", prodMarker+"\nI wrote this by hand")
	other := gh.addComment(pr, "renovate[bot]", prodMarker+"\nanother app's comment")
	gh.mu.Unlock()
	dev, prod := newWorkspace(t, gh), newWorkspace(t, gh)

	push := func(w *workspace, key, specs, want string) string {
		t.Helper()
		w.write("main.yaml", specs)
		w.reconcile(2, "plan", "--out", "plan.bin", "--detailed-exitcode")
		r := w.exec(nil, reconcileBin, "show", "plan.bin", "--output", "markdown")
		if r.code != 0 {
			t.Fatalf("show:\n%s", r)
		}
		w.write("comment.md", r.stdout)
		out := w.step(0, []string{"RECONCILE_GH_KEY=" + key}, "comment", strconv.Itoa(pr), "comment.md")
		if !strings.Contains(out.stdout, want) {
			t.Errorf("%s: want %q in:\n%s", key, want, out)
		}
		return r.stdout
	}
	// The dev stack's specs carry prod's marker in an output's value, and
	// the plan shows it as it is (in a code block, where GitHub shows it
	// as text).
	devSpecs := policies("web=viewer") + "outputs:\n  note: \"" + prodMarker + "\"\n"
	devPlan := push(dev, "dev", devSpecs, "Commented the plan on #7")
	if !strings.Contains(devPlan, prodMarker) {
		t.Fatalf("the dev plan does not show the value holding prod's marker, which this test needs:\n%s", devPlan)
	}
	prodPlan := push(prod, "prod", policies("api=editor"), "Commented the plan on #7")
	devPlan = push(dev, "dev", devSpecs+"  more: \"x\"\n", "Updated the plan comment on #7")
	prodPlan = push(prod, "prod", policies("api=viewer"), "Updated the plan comment on #7")

	gh.mu.Lock()
	defer gh.mu.Unlock()
	var bodies []string
	for _, c := range gh.comments {
		if c.User.Login == botID {
			bodies = append(bodies, c.Body)
		}
	}
	if len(bodies) != 2 || !strings.HasPrefix(bodies[0], devMarker+"\n") || !strings.HasPrefix(bodies[1], prodMarker+"\n") {
		t.Fatalf("the bot's comments: want dev's, then prod's:\n%s", strings.Join(bodies, "\n-----\n"))
	}
	if !strings.Contains(bodies[0], devPlan) || !strings.Contains(bodies[0], "of stack dev") {
		t.Errorf("dev's comment does not hold dev's last plan:\n%s", bodies[0])
	}
	if !strings.Contains(bodies[1], prodPlan) || !strings.Contains(bodies[1], "of stack prod") {
		t.Errorf("prod's comment does not hold prod's last plan:\n%s", bodies[1])
	}
	if alice.Body != prodMarker+"\nI wrote this by hand" || other.Body != prodMarker+"\nanother app's comment" {
		t.Errorf("comments of others that open with the marker were changed: %q, %q", alice.Body, other.Body)
	}
}

// TestDriftIssueMarkersPerStack: the dev stack's open drift issue quotes
// the prod stack's marker (a drifted value holding it), and an issue by
// someone else opens with it. prod's drift opens prod's own issue, and
// prod's end of drift closes that one: neither touches the others.
func TestDriftIssueMarkersPerStack(t *testing.T) {
	needTools(t)
	t.Parallel()
	gh := newFakeGitHub(t)
	prodMarker := "<!-- reconcile-gh:drift:prod -->"
	devBody := "<!-- reconcile-gh:drift:dev -->\n## Drift in 1 resource\n\n```\n  note = \"" + prodMarker + "\"\n```\n"
	gh.mu.Lock()
	gh.labels = append(gh.labels, label{Name: "reconcile-drift"})
	devIssue := gh.addIssue(botID, "Drift in stack dev", devBody)
	devIssue.Labels = []label{{Name: "reconcile-drift"}}
	spoof := gh.addIssue("mallory", "Drift in stack prod", prodMarker+"\nfake")
	spoof.Labels = []label{{Name: "reconcile-drift"}}
	gh.mu.Unlock()
	w := newScriptWorkspace(t, gh)
	w.write("drift.md", "## Drift in 1 resource\n\n`web` changed outside reconcile\n")

	r := w.step(0, nil, "drift-issue", "2", "drift.md")
	if !strings.Contains(r.stdout, "Drift: opened #3") {
		t.Errorf("prod's drift: want a new issue, #3:\n%s", r)
	}
	r = w.step(0, nil, "drift-issue", "0", "drift.md")
	if !strings.Contains(r.stdout, "closed #3") {
		t.Errorf("prod's drift gone: want #3 closed:\n%s", r)
	}
	gh.mu.Lock()
	defer gh.mu.Unlock()
	if devIssue.State != "open" || devIssue.Body != devBody || spoof.State != "open" || spoof.Body != prodMarker+"\nfake" {
		t.Errorf("issues not prod's were changed: %+v, %+v", *devIssue, *spoof)
	}
	if len(gh.issues) != 3 || gh.issues[2].Title != "Drift in stack prod" || !strings.HasPrefix(gh.issues[2].Body, prodMarker+"\n") || gh.issues[2].State != "closed" {
		t.Errorf("prod's issue: %+v", gh.issues[2:])
	}
}
