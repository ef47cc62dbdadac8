#!/usr/bin/env bash
# reconcile-gh.sh: the GitHub steps of reconcile's CI kit, the workflows in
# ci/github/workflows (see reconcile's docs/ci.md).
# Copy it to .github/reconcile-gh.sh of the repository holding the specs.
#
# It talks to the GitHub REST API with curl and jq, both on GitHub's hosted
# runners. The token is sent in a header only, handed to curl on its
# standard input: it is never on a command line, in a file or in the output.
# Its install step needs no token: curl, sha256sum (or shasum) and tar.
set -euo pipefail

usage() {
	cat <<'EOF'
Usage:
  reconcile-gh.sh install VERSION DIR
      Installs release VERSION (vX.Y.Z) of reconcile as DIR/reconcile, and
      adds DIR to "$GITHUB_PATH" for the steps after: downloads the archive
      for the runner's system and processor from RECONCILE_RELEASE_URL and
      checks its SHA-256 against the release's SHA256SUMS and, when it is
      set, against RECONCILE_SHA256, before anything is unpacked. On any
      failure (a download, a missing line, a digest that differs) nothing
      is installed, and a reconcile already in DIR is left as it was.
  reconcile-gh.sh comment PR_NUMBER BODY_FILE
      Puts BODY_FILE (a plan as 'reconcile show PLANFILE --output markdown'
      renders it) on pull request PR_NUMBER as reconcile's one sticky
      comment: created the first time, updated in place on every push after,
      found again as the comment of RECONCILE_GH_BOT whose first line is the
      hidden marker of RECONCILE_GH_KEY.
  reconcile-gh.sh drift-issue STATUS BODY_FILE
      After 'reconcile drift --output markdown > BODY_FILE' exited STATUS:
      2 (drift) opens the drift issue, or updates it while the drift
      persists; 0 (no drift) closes it, with a comment; anything else (1, an
      error) leaves it alone and fails.
  reconcile-gh.sh plan-run COMMIT_SHA BRANCH
      For the apply on merge: finds the pull request that COMMIT_SHA merged
      into BRANCH and the run of the plan workflow that planned it, and
      prints pr=, head_sha= and run_id= lines (for "$GITHUB_OUTPUT"). It
      fails, applying nothing, unless exactly one pull request was merged,
      it left the plan workflow and this script as they were on BRANCH, and
      the last run on its head was made for it while it was open into BRANCH
      and succeeded: not one of another pull request from the same branch
      into another base, nor one from before a change of its base.

Environment (GitHub Actions sets those marked *):
  GITHUB_TOKEN                the token: ${{ github.token }}; never printed
                              (install needs none)
  GITHUB_API_URL*             the API, https://api.github.com by default
  GITHUB_REPOSITORY*          owner/name
  GITHUB_SERVER_URL*, GITHUB_RUN_ID*
                              for the link to the run in what is written
  RECONCILE_GH_KEY            what the marker, the drift issue's title and its
                              marker name: the stack (default "default"), so
                              that several stacks have a comment and an issue
                              each
  RECONCILE_GH_COMMIT         the commit the comment names (the pull
                              request's head); GITHUB_SHA by default
  RECONCILE_GH_BOT            the login that writes the comments and issues,
                              github-actions[bot] by default (with a GitHub
                              App's token: its bot's login): only theirs,
                              with the marker as their first line, are found
                              again and changed
  RECONCILE_GH_DRIFT_LABEL    the drift issue's label, reconcile-drift
  RECONCILE_GH_DRIFT_TITLE    its title, "Drift in stack KEY"
  RECONCILE_GH_PLAN_WORKFLOW  the plan workflow's file, reconcile-plan.yml
  RECONCILE_SHA256            for install: the SHA-256 (64 hex digits) of
                              the archive for the runner, pinned in the
                              workflow; SHA256SUMS comes from the server
                              that serves the archive, so only this digest
                              makes sure of what runs
  RECONCILE_RELEASE_URL       for install: where releases are, by default
                              https://github.com/reconcile-dev/reconcile/releases/download
                              (VERSION/ARCHIVE is added); https:// or file://
  RUNNER_OS*, RUNNER_ARCH*    the runner's system and processor (uname's
                              when unset)
  RUNNER_TEMP*, GITHUB_PATH*  where install downloads, and the file of the
                              directories added to PATH
EOF
}

die() {
	printf 'reconcile-gh: %s\n' "$*" >&2
	exit 1
}

# A body over this many bytes is cut: GitHub refuses comments and issue
# bodies over 65,536 characters, and the marker and footer need room.
max_body=60000

api_url=${GITHUB_API_URL:-https://api.github.com}
api_url=${api_url%/}
repo=${GITHUB_REPOSITORY:-}
key=${RECONCILE_GH_KEY:-default}
bot=${RECONCILE_GH_BOT:-github-actions[bot]}
label=${RECONCILE_GH_DRIFT_LABEL:-reconcile-drift}
title=${RECONCILE_GH_DRIFT_TITLE:-Drift in stack $key}
plan_workflow=${RECONCILE_GH_PLAN_WORKFLOW:-reconcile-plan.yml}

check_env() {
	command -v curl >/dev/null || die "curl is not installed"
	command -v jq >/dev/null || die "jq is not installed"
	# shellcheck disable=SC2016 # the workflow expression, as written in YAML
	[[ -n ${GITHUB_TOKEN:-} ]] || die 'GITHUB_TOKEN is not set: give the step env: GITHUB_TOKEN: ${{ github.token }}'
	# The token goes into curl's configuration between double quotes.
	[[ $GITHUB_TOKEN =~ ^[A-Za-z0-9_.-]+$ ]] || die "GITHUB_TOKEN does not look like a GitHub token (letters, digits, '_', '.', '-')"
	[[ $repo =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] || die "GITHUB_REPOSITORY must be owner/name, got '$repo'"
	[[ $key =~ ^[A-Za-z0-9_.:/-]+$ && $key != *--* ]] || die "RECONCILE_GH_KEY may hold letters, digits and _ . : / - (not --), got '$key'"
	[[ $plan_workflow =~ ^[A-Za-z0-9_.-]+$ ]] || die "RECONCILE_GH_PLAN_WORKFLOW must be a file name, got '$plan_workflow'"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
}

# request METHOD PATH JSON_FILE OUT: calls the API (with JSON_FILE's JSON
# as the request's body, unless it is ""), writes the answer's body to OUT
# and its HTTP status to stdout.
request() {
	local method=$1 path=$2 data=$3 out=$4
	# --disable (first): no ~/.curlrc; --config -: the headers, from stdin.
	local args=(--disable --silent --show-error --max-time 60 --request "$method" --output "$out" --write-out '%{http_code}' --config -)
	if [[ $method == GET ]]; then
		args+=(--retry 3)
	fi
	if [[ -n $data ]]; then
		args+=(--header 'Content-Type: application/json' --data-binary "@$data")
	fi
	curl "${args[@]}" "$api_url$path" <<EOF || die "$method $api_url$path: the request failed (see curl's message above)"
header = "Authorization: Bearer $GITHUB_TOKEN"
header = "Accept: application/vnd.github+json"
header = "X-GitHub-Api-Version: 2022-11-28"
user-agent = "reconcile-gh"
EOF
}

# api METHOD PATH [JSON_FILE]: calls the API and writes the answer's body to
# stdout; on an error status, says which call failed with GitHub's message.
api() {
	local method=$1 path=$2 out status
	out=$(mktemp "$tmp/answer.XXXXXX")
	status=$(request "$method" "$path" "${3:-}" "$out")
	if [[ $status != 2?? ]]; then
		fail "$method $path" "$status" "$out"
	fi
	cat "$out"
}

# fail CALL STATUS ANSWER_FILE: dies saying that CALL got STATUS, with the
# message of GitHub's answer.
fail() {
	local message
	message=$(jq -r '.message // empty' "$3" 2>/dev/null | head -c 500) || true
	die "$1: HTTP $2${message:+: $message}"
}

# list PATH: every element of a paged list, as one JSON array (100 a page,
# at most 100 pages).
list() {
	local path=$1 page sep='?' n
	[[ $path == *\?* ]] && sep='&'
	for ((page = 1; page <= 100; page++)); do
		api GET "$path${sep}per_page=100&page=$page" >"$tmp/page.$page.json"
		n=$(jq 'length' "$tmp/page.$page.json")
		if ((n < 100)); then
			jq -s 'add // []' "$tmp"/page.*.json
			rm -f "$tmp"/page.*.json
			return
		fi
	done
	die "GET $path: more than 10,000 elements"
}

run_url() {
	if [[ -n ${GITHUB_RUN_ID:-} ]]; then
		printf '%s/%s/actions/runs/%s' "${GITHUB_SERVER_URL:-https://github.com}" "$repo" "$GITHUB_RUN_ID"
	fi
}

# compose MARKER FILE FOOTER: the text to post: the hidden marker as its
# first line (the one find_mine reads), the file's text (cut to max_body
# bytes) and a footer line.
compose() {
	local marker=$1 file=$2 footer=$3 size
	printf '<!-- %s -->\n' "$marker"
	size=$(wc -c <"$file")
	if ((size > max_body)); then
		head -c "$max_body" "$file"
		printf '\n\n*Cut at %d of %d bytes to stay under the size limit of GitHub: the whole text is in the log of the run.*\n' "$max_body" "$size"
	else
		cat "$file"
	fi
	printf '\n<sub>%s</sub>\n' "$footer"
}

# body_json FILE [TITLE [LABEL]]: the JSON of a comment or issue with FILE's
# text as its body.
body_json() {
	if [[ $# -eq 1 ]]; then
		jq -n --rawfile body "$1" '{body: $body}'
	else
		jq -n --rawfile body "$1" --arg title "$2" --arg name "$3" '{title: $title, body: $body, labels: [$name]}'
	fi
}

# find_mine MARKER [FIELD]: the id (of a comment) or number (of an issue)
# of the first element of the JSON array on stdin that is the kit's own:
# written by the bot, with MARKER as its first line. Nothing else counts:
# not the marker further down, where the text compose copies from the
# file (a plan's values, a cloud's answer) could hold another stack's; not
# a body by anyone else, who can write anything. compose always writes the
# first line itself.
find_mine() {
	jq -r --arg marker "<!-- $1 -->" --arg bot "$bot" --arg field "${2:-id}" \
		'[.[] | select(.user.login == $bot and ((.body // "") | split("\n")[0] | rtrimstr("\r")) == $marker)] | first | .[$field] // empty'
}

cmd_comment() {
	[[ $# -eq 2 ]] || die "comment takes PR_NUMBER BODY_FILE"
	local pr=$1 file=$2 marker id commit footer url
	[[ $pr =~ ^[0-9]+$ ]] || die "comment: PR_NUMBER must be a number, got '$pr'"
	[[ -f $file ]] || die "comment: no file $file"
	marker="reconcile-gh:plan:$key"
	commit=${RECONCILE_GH_COMMIT:-${GITHUB_SHA:-}}
	footer="reconcile plan of stack $key"
	[[ -n $commit ]] && footer+=" at ${commit:0:12}"
	url=$(run_url)
	[[ -n $url ]] && footer+=" · [run]($url)"
	footer+=" · updated on every push"
	compose "$marker" "$file" "$footer" >"$tmp/body.md"
	body_json "$tmp/body.md" >"$tmp/comment.json"
	id=$(list "/repos/$repo/issues/$pr/comments" | find_mine "$marker")
	if [[ -n $id ]]; then
		url=$(api PATCH "/repos/$repo/issues/comments/$id" "$tmp/comment.json" | jq -r '.html_url // empty')
		echo "Updated the plan comment on #$pr: $url"
	else
		url=$(api POST "/repos/$repo/issues/$pr/comments" "$tmp/comment.json" | jq -r '.html_url // empty')
		echo "Commented the plan on #$pr: $url"
	fi
}

# ensure_label: the drift label exists (an issue created with a label that
# does not would lose it, and the issue would not be found again).
ensure_label() {
	local enc status
	enc=$(jq -rn --arg l "$label" '$l | @uri')
	status=$(request GET "/repos/$repo/labels/$enc" "" "$tmp/label.answer")
	case $status in
	200) return ;;
	404) ;;
	*) fail "GET /repos/$repo/labels/$enc" "$status" "$tmp/label.answer" ;;
	esac
	jq -n --arg name "$label" '{name: $name, color: "d93f0b", description: "Drift reported by reconcile drift"}' >"$tmp/label.json"
	api POST "/repos/$repo/labels" "$tmp/label.json" >/dev/null
	echo "Created the label $label"
}

cmd_drift_issue() {
	[[ $# -eq 2 ]] || die "drift-issue takes STATUS BODY_FILE"
	local status=$1 file=$2 marker number enc url footer
	case $status in
	0 | 2) ;;
	*) die "reconcile drift exited $status (an error, see its message above): the drift issue is left as it is" ;;
	esac
	if [[ $status == 2 && ! -f $file ]]; then
		die "drift-issue: no file $file"
	fi
	marker="reconcile-gh:drift:$key"
	enc=$(jq -rn --arg l "$label" '$l | @uri')
	number=$(list "/repos/$repo/issues?state=open&labels=$enc" | jq '[.[] | select(.pull_request == null)]' | find_mine "$marker" number)
	url=$(run_url)
	if [[ $status == 2 ]]; then
		footer="Reported by reconcile drift"
		[[ -n $url ]] && footer+=" in [this run]($url)"
		footer+=": this issue is updated while the drift lasts and closed once it is gone."
		compose "$marker" "$file" "$footer" >"$tmp/body.md"
		if [[ -n $number ]]; then
			body_json "$tmp/body.md" >"$tmp/issue.json"
			url=$(api PATCH "/repos/$repo/issues/$number" "$tmp/issue.json" | jq -r '.html_url // empty')
			echo "The drift persists: updated #$number $url"
		else
			ensure_label
			body_json "$tmp/body.md" "$title" "$label" >"$tmp/issue.json"
			url=$(api POST "/repos/$repo/issues" "$tmp/issue.json" | jq -r '"#\(.number) \(.html_url // "")"')
			echo "Drift: opened $url"
		fi
		return
	fi
	if [[ -z $number ]]; then
		echo "No drift, and no drift issue open: nothing to do"
		return
	fi
	printf 'No drift any more%s: closing.\n' "${url:+ ([run]($url))}" >"$tmp/note.md"
	body_json "$tmp/note.md" >"$tmp/note.json"
	api POST "/repos/$repo/issues/$number/comments" "$tmp/note.json" >/dev/null
	jq -n '{state: "closed", state_reason: "completed"}' >"$tmp/close.json"
	api PATCH "/repos/$repo/issues/$number" "$tmp/close.json" >/dev/null
	echo "No drift any more: closed #$number"
}

# The kit's script where the workflows call it. A pull request that changes
# it or the plan workflow has its plan made by its own version of them.
kit_script=.github/reconcile-gh.sh

# How long after another pull request from the same branch was closed a
# run of the plan workflow may still be that one's: GitHub can create a run
# some time after the event that starts it.
run_delay=600

# base_changes NUMBER: when pull request NUMBER changed its base, as a JSON
# array of times (seconds since 1970).
base_changes() {
	list "/repos/$repo/issues/$1/events" | jq '[.[] | select(.event == "base_ref_changed") | .created_at | fromdateiso8601]'
}

# plan-run COMMIT_SHA BRANCH: the run of the plan workflow that made the
# plan reviewed on the pull request that COMMIT_SHA merged into BRANCH.
#
# On a pull_request event GitHub runs the workflow files of the merge of the
# pull request's head into its base, so a run used its base's plan workflow
# and script only if the pull request changed neither. And a run's record
# does not say which pull request started it: its pull_requests field lists
# the open ones that share its head or branch (merged ones not), whichever
# started it. So a run is taken as this pull request's only when no other
# pull request can have started it: runs from another branch are not; runs
# from its branch, made after it was opened (and after its last change of
# base) and before its merge, are, unless another pull request from that
# branch into another base (or that changed base) was open at the time.
cmd_plan_run() {
	[[ $# -eq 2 ]] || die "plan-run takes COMMIT_SHA BRANCH"
	local sha=$1 branch=$2 pr head head_ref start end wf_id wf_path changed others n number page ambiguous run id status
	[[ $sha =~ ^[0-9a-f]{40}$ ]] || die "plan-run: COMMIT_SHA must be a full commit hash, got '$sha'"
	[[ -n $branch && $branch != *[[:space:][:cntrl:]]* ]] || die "plan-run: BRANCH must be the branch pushed to (\$GITHUB_REF_NAME), got '$branch'"

	# The pull request that this commit merged into BRANCH, by GitHub's
	# record of the merge.
	list "/repos/$repo/commits/$sha/pulls" |
		jq --arg sha "$sha" --arg branch "$branch" --arg repo "$repo" \
			'[.[] | select(.merge_commit_sha == $sha and .merged_at != null and .base.ref == $branch and .base.repo.full_name == $repo) | .number]' >"$tmp/merged.json"
	case $(jq length "$tmp/merged.json") in
	0) die "commit $sha did not merge a pull request into $branch: there is no reviewed plan to apply (let changes reach $branch through pull requests only)" ;;
	1) pr=$(jq -r '.[0]' "$tmp/merged.json") ;;
	*) die "commit $sha is the merge of several pull requests into $branch ($(jq -r 'map("#\(.)") | join(", ")' "$tmp/merged.json")): which plan to apply cannot be told, so none is applied" ;;
	esac
	[[ $pr =~ ^[0-9]+$ ]] || die "GitHub gave '$pr' as the number of the pull request merged by $sha"
	api GET "/repos/$repo/pulls/$pr" >"$tmp/pr.json"
	jq -e --arg sha "$sha" --arg branch "$branch" --arg repo "$repo" \
		'.merged == true and .merge_commit_sha == $sha and .base.ref == $branch and .base.repo.full_name == $repo' "$tmp/pr.json" >/dev/null ||
		die "#$pr is not, by its own record, merged into $branch by $sha: nothing is applied"
	jq -e --arg repo "$repo" '.head.repo.full_name == $repo' "$tmp/pr.json" >/dev/null ||
		die "#$pr comes from another repository (a fork), whose pull requests are not planned: there is no reviewed plan to apply"
	head=$(jq -r '.head.sha' "$tmp/pr.json")
	head_ref=$(jq -r '.head.ref' "$tmp/pr.json")
	# An empty head_sha would make GitHub list the runs of every commit.
	[[ $head =~ ^[0-9a-f]{40}$ && -n $head_ref ]] || die "#$pr: GitHub gave no head commit and branch ('$head', '$head_ref')"

	# The plan workflow, as GitHub knows it: its runs are those of this
	# file (a pull request's added workflow is another, with another id).
	api GET "/repos/$repo/actions/workflows/$plan_workflow" >"$tmp/workflow.json"
	wf_id=$(jq -r '.id' "$tmp/workflow.json")
	wf_path=$(jq -r '.path' "$tmp/workflow.json")
	[[ $wf_id =~ ^[0-9]+$ && $wf_path == .github/workflows/* ]] || die "GitHub gave id '$wf_id' and path '$wf_path' for the plan workflow $plan_workflow"

	# Its runs on the pull request ran its base's plan workflow and script
	# only if the pull request changed neither.
	list "/repos/$repo/pulls/$pr/files" >"$tmp/files.json"
	(($(jq length "$tmp/files.json") < 3000)) ||
		die "#$pr changes 3,000 files or more, more than GitHub lists: whether it changed $wf_path cannot be told, so nothing is applied"
	changed=$(jq -r --arg wf "$wf_path" --arg kit "$kit_script" \
		'[.[] | .filename, (.previous_filename // empty) | select(. == $wf or . == $kit)] | unique | join(" and ")' "$tmp/files.json")
	[[ -z $changed ]] ||
		die "#$pr changed $changed: its plan was made by the pull request's own version, which ran before anyone reviewed it, not by $branch's, so nothing is applied. Merge changes to the kit in pull requests of their own, then open a pull request to have the specs planned again"

	# Its runs are those made while it was open into BRANCH: after it was
	# opened and after its last change of base, and before the merge.
	start=$(base_changes "$pr" | jq --slurpfile p "$tmp/pr.json" '. + [$p[0].created_at | fromdateiso8601] | max')
	end=$(jq '.merged_at | fromdateiso8601' "$tmp/pr.json")

	# Other pull requests from the same branch may have started runs on the
	# same head. One into BRANCH that never changed base ran the same files
	# on the same merge; any other is suspect while it was open (and for
	# run_delay after).
	list "/repos/$repo/pulls?state=all&head=$(jq -rn --arg h "${repo%%/*}:$head_ref" '$h | @uri')" |
		jq --argjson pr "$pr" --arg ref "$head_ref" --arg repo "$repo" \
			'[.[] | select(.number != $pr and .head.ref == $ref and (.head.repo.full_name // "") == $repo)]' >"$tmp/others.json"
	printf '[]' >"$tmp/suspects.json"
	others=$(jq length "$tmp/others.json")
	for ((n = 0; n < others; n++)); do
		number=$(jq -r ".[$n].number" "$tmp/others.json")
		[[ $number =~ ^[0-9]+$ ]] || die "GitHub gave '$number' as the number of a pull request from $head_ref"
		if jq -e --arg branch "$branch" ".[$n].base.ref == \$branch" "$tmp/others.json" >/dev/null &&
			[[ $(base_changes "$number" | jq length) == 0 ]]; then
			continue
		fi
		jq --slurpfile o "$tmp/others.json" --argjson n "$n" --argjson delay "$run_delay" \
			'. + [$o[0][$n] | {number, base: .base.ref, from: (.created_at | fromdateiso8601), to: (if .closed_at then (.closed_at | fromdateiso8601) + $delay else infinite end)}]' \
			"$tmp/suspects.json" >"$tmp/suspects.next.json"
		mv "$tmp/suspects.next.json" "$tmp/suspects.json"
	done

	# The runs of the plan workflow on the head (an event and a head that
	# GitHub filters on, and that are checked again here).
	for ((page = 1; ; page++)); do
		((page <= 10)) || die "more than 1,000 runs of $wf_path on $head: which one is #$pr's cannot be told, so nothing is applied"
		api GET "/repos/$repo/actions/workflows/$wf_id/runs?event=pull_request&head_sha=$head&per_page=100&page=$page" >"$tmp/runs.$page.json"
		(($(jq '.workflow_runs // [] | length' "$tmp/runs.$page.json") == 100)) || break
	done
	jq -s --argjson wf "$wf_id" --arg path "$wf_path" --arg merge "@refs/pull/$pr/merge" --arg head "$head" --arg ref "$head_ref" \
		--arg repo "$repo" --argjson after "$start" --argjson before "$end" '
		[.[] | (.workflow_runs // [])[]
			| select(.workflow_id == $wf and (.path == $path or .path == $path + $merge) and .event == "pull_request"
				and .head_sha == $head and .head_branch == $ref
				and .repository.full_name == $repo and .head_repository.full_name == $repo)
			| . + {created: (.created_at | fromdateiso8601)}
			| select(.created >= $after and .created <= $before)]' "$tmp"/runs.*.json >"$tmp/candidates.json"
	ambiguous=$(jq -r --slurpfile s "$tmp/suspects.json" --arg ref "$head_ref" '
		[.[] as $r | $s[0][] | select($r.created >= .from and $r.created <= .to)
			| "run \($r.id) may be that of #\(.number), from \($ref) into \(.base)"] | unique | join("; ")' "$tmp/candidates.json")
	[[ -z $ambiguous ]] ||
		die "the plan runs on $head cannot be told apart from those of other pull requests from $head_ref ($ambiguous), so nothing is applied: open a new pull request to have the specs planned again"
	run=$(jq -c 'max_by([.created, .run_number, .id]) // empty' "$tmp/candidates.json")
	[[ -n $run ]] ||
		die "no run of $wf_path planned #$pr on $head while it was open into $branch: there is no reviewed plan to apply (open a new pull request to have the specs planned again)"
	id=$(jq -r '.id' <<<"$run")
	status=$(jq -r '"\(.status)/\(.conclusion // "none")"' <<<"$run")
	[[ $id =~ ^[0-9]+$ ]] || die "GitHub gave '$id' as the id of a run"
	[[ $status == completed/success ]] ||
		die "the last plan of #$pr on $head, run $id, is $status: its plan is not the one shown on the pull request, so nothing is applied (re-run it, or open a new pull request)"
	printf 'reconcile-gh: applying the plan of #%s (%s into %s, head %s) made by run %s of %s\n' "$pr" "$head_ref" "$branch" "$head" "$id" "$wf_path" >&2
	printf 'pr=%s\nhead_sha=%s\nrun_id=%s\n' "$pr" "$head" "$id"
}

# The releases: VERSION/ARCHIVE under this URL.
release_url=${RECONCILE_RELEASE_URL:-https://github.com/reconcile-dev/reconcile/releases/download}
release_url=${release_url%/}

# sha256 FILE: the SHA-256 of FILE, in hex.
sha256() {
	local sum
	if command -v sha256sum >/dev/null; then
		sum=$(sha256sum <"$1")
	else
		sum=$(shasum -a 256 <"$1")
	fi
	printf '%s' "${sum%% *}"
}

# download URL FILE: fetches URL into FILE, or dies. Redirects are
# followed (GitHub serves release files from another host) on https only.
download() {
	curl --disable --fail --silent --show-error --location --proto '=https,file' --proto-redir '=https' \
		--retry 3 --connect-timeout 30 --max-time 600 --user-agent reconcile-gh --output "$2" "$1" ||
		die "install: downloading $1 failed (see curl's message above): check the version, and that the release has this file; nothing was installed"
}

# platform: the os_arch part of the archive's name for this runner.
platform() {
	local os arch
	os=${RUNNER_OS:-$(uname -s)}
	arch=${RUNNER_ARCH:-$(uname -m)}
	case $os in
	Linux) os=linux ;;
	macOS | Darwin) os=darwin ;;
	*) die "install: reconcile installs itself on Linux and macOS runners, not on '$os': on Windows, unpack reconcile.exe from the release's windows_amd64 .zip (checked against SHA256SUMS) in a step of your own" ;;
	esac
	case $arch in
	X64 | x86_64 | amd64) arch=amd64 ;;
	ARM64 | aarch64 | arm64) arch=arm64 ;;
	*) die "install: reconcile is released for amd64 (X64) and arm64 (ARM64) processors, not '$arch'" ;;
	esac
	printf '%s_%s' "$os" "$arch"
}

cmd_install() {
	[[ $# -eq 2 ]] || die "install takes VERSION DIR"
	local version=$1 dir=$2 pin=${RECONCILE_SHA256:-} name url listed n got stage member bin
	[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
		die "install: VERSION must be a release tag such as v0.1.0, got '$version'"
	[[ -n $dir ]] || die "install: DIR must be the directory to install reconcile in"
	case $release_url in
	https://* | file://*) ;;
	*) die "install: RECONCILE_RELEASE_URL must be an https:// (or file://) URL, got '$release_url'" ;;
	esac
	if [[ -n $pin ]]; then
		pin=$(tr 'A-F' 'a-f' <<<"$pin")
		[[ $pin =~ ^[0-9a-f]{64}$ ]] || die "install: RECONCILE_SHA256 must be a SHA-256 in hex (64 digits), got '$pin'"
	fi
	command -v curl >/dev/null || die "curl is not installed"
	command -v tar >/dev/null || die "tar is not installed"
	command -v sha256sum >/dev/null || command -v shasum >/dev/null || die "neither sha256sum nor shasum is installed"
	name=reconcile_${version}_$(platform).tar.gz
	url=$release_url/$version

	tmp=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/reconcile-install.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT

	# The release's digest of the archive: exactly one line of SHA256SUMS
	# names it (as sha256sum writes them: digest, two spaces, name).
	download "$url/SHA256SUMS" "$tmp/SHA256SUMS"
	listed=$(awk -v name="$name" '$2 == name || $2 == "*" name { print $1 }' "$tmp/SHA256SUMS")
	n=$(grep -c . <<<"$listed" || true)
	((n > 0)) || die "install: $url/SHA256SUMS has no line for $name: is $version released for this runner? Nothing was installed"
	((n == 1)) || die "install: $url/SHA256SUMS has $n lines for $name: nothing was installed"
	listed=$(tr 'A-F' 'a-f' <<<"$listed")
	[[ $listed =~ ^[0-9a-f]{64}$ ]] || die "install: $url/SHA256SUMS gives '$listed' as the SHA-256 of $name, which is not one: nothing was installed"
	if [[ -n $pin && $pin != "$listed" ]]; then
		die "install: $url/SHA256SUMS gives $listed as the SHA-256 of $name, but RECONCILE_SHA256 pins $pin: the release was changed since the digest was pinned, or the digest is another archive's (each system and processor has its own). Nothing was installed"
	fi

	# The archive, checked before it is unpacked.
	download "$url/$name" "$tmp/$name"
	got=$(sha256 "$tmp/$name")
	[[ $got == "$listed" ]] ||
		die "install: $name downloaded from $url has SHA-256 $got, not $listed (SHA256SUMS${pin:+ and RECONCILE_SHA256}): it is corrupt or was tampered with, and is not run. Nothing was installed"

	# The binary only, from the archive's root.
	member=$(tar -tzf "$tmp/$name" | grep -xE '(\./)?reconcile' || true)
	[[ $(grep -c . <<<"$member" || true) == 1 ]] || die "install: $name holds no reconcile at its root (or more than one): nothing was installed"
	mkdir "$tmp/x"
	tar -xzf "$tmp/$name" -C "$tmp/x" -- "$member" || die "install: unpacking $name failed: nothing was installed"
	bin=$tmp/x/reconcile
	[[ -f $bin && ! -L $bin ]] || die "install: the reconcile in $name is not a file: nothing was installed"

	# Into DIR by a rename, so that DIR/reconcile is the old file or the
	# new one, never a part; it must run first.
	mkdir -p "$dir" || die "install: cannot create $dir"
	dir=$(CDPATH='' cd -- "$dir" && pwd)
	stage=$(mktemp "$dir/.reconcile.XXXXXX")
	tmp_stage=$stage
	trap 'rm -rf "$tmp" "$tmp_stage"' EXIT
	cp "$bin" "$stage"
	chmod 755 "$stage"
	"$stage" version || die "install: $name's reconcile does not run on this runner: nothing was installed"
	mv -f "$stage" "$dir/reconcile"
	if [[ -n ${GITHUB_PATH:-} ]]; then
		printf '%s\n' "$dir" >>"$GITHUB_PATH"
	fi
	if [[ -n $pin ]]; then
		echo "Installed reconcile $version in $dir: $name from $url, SHA-256 $got, as pinned by RECONCILE_SHA256 and listed in SHA256SUMS"
	else
		echo "Installed reconcile $version in $dir: $name from $url, SHA-256 $got, as listed in SHA256SUMS. That file comes from the same server as the archive: pin the digest with RECONCILE_SHA256 to be sure of what runs"
	fi
}

main() {
	case ${1:-} in
	install)
		shift
		cmd_install "$@"
		;;
	comment | drift-issue | plan-run)
		local cmd=$1
		shift
		check_env
		"cmd_${cmd//-/_}" "$@"
		;;
	-h | --help | help)
		usage
		;;
	*)
		usage >&2
		exit 1
		;;
	esac
}

main "$@"
