#!/usr/bin/env bash
# reconcile-gh.sh: the GitHub steps of reconcile's CI kit, the workflows in
# ci/github/workflows (see "Using reconcile in CI" in reconcile's README).
# Copy it to .github/reconcile-gh.sh of the repository holding the specs.
#
# It talks to the GitHub REST API with curl and jq, both on GitHub's hosted
# runners. The token is sent in a header only, handed to curl on its
# standard input: it is never on a command line, in a file or in the output.
set -euo pipefail

usage() {
	cat <<'EOF'
Usage:
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
  reconcile-gh.sh plan-run COMMIT_SHA
      For the apply on merge: finds the pull request that COMMIT_SHA merged
      and the successful run of the plan workflow on its head, and prints
      pr=, head_sha= and run_id= lines (for "$GITHUB_OUTPUT").

Environment (GitHub Actions sets those marked *):
  GITHUB_TOKEN                the token: ${{ github.token }}; never printed
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

cmd_plan_run() {
	[[ $# -eq 1 ]] || die "plan-run takes COMMIT_SHA"
	local sha=$1 pr head run
	[[ $sha =~ ^[0-9a-f]{40}$ ]] || die "plan-run: COMMIT_SHA must be a full commit hash, got '$sha'"
	api GET "/repos/$repo/commits/$sha/pulls" >"$tmp/pulls.json"
	pr=$(jq -r --arg sha "$sha" '[.[] | select(.merge_commit_sha == $sha and .merged_at != null)] | first | .number // empty' "$tmp/pulls.json")
	[[ -n $pr ]] || die "commit $sha did not merge a pull request: there is no reviewed plan to apply (let changes reach the branch through pull requests only)"
	head=$(jq -r --argjson pr "$pr" '.[] | select(.number == $pr) | .head.sha' "$tmp/pulls.json")
	api GET "/repos/$repo/actions/workflows/$plan_workflow/runs?event=pull_request&status=success&head_sha=$head&per_page=100" >"$tmp/runs.json"
	run=$(jq -r --arg repo "$repo" '[.workflow_runs[] | select(.head_repository.full_name == $repo)] | max_by(.run_number) | .id // empty' "$tmp/runs.json")
	[[ -n $run ]] || die "no successful run of $plan_workflow on $head, the head of #$pr: there is no reviewed plan to apply (re-run the plan of #$pr)"
	printf 'pr=%s\nhead_sha=%s\nrun_id=%s\n' "$pr" "$head" "$run"
}

main() {
	case ${1:-} in
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
