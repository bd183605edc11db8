#!/usr/bin/env bash
# The product speaks of itself alone: no wording about its own making (work sessions, issue
# numbers, a work journal) in the README, the docs, the crates' code and comments, or the fuzz
# harness. Prints every offending line as FILE:LINE:TEXT and exits 1 if there is any; .ci/run
# runs it.
#
# Usage: .ci/wording.sh [PATH]...   (paths from the repository's root; default: README.md docs
# crates fuzz wireshark scripts captures)
#
# What counts (case-insensitive), each kept narrow so that technical words pass: an authenticated
# `Session`, an interactive session of a capture, `journalctl`, the items of a draft's list.
#   - a work session: "the fifth session", "this session's start", "session by session";
#   - an issue of the tracker: "issue 11", "issue #12", "issue-11", "(issue 12)", "the issue's
#     goal", "the issue asks";
#   - a work journal: "journal" as a word (not `journalctl`);
#   - an item of a work list: "(item 7)", "item 7 of the issue", "the brief's".
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -eq 0 ]; then
  set -- README.md docs crates fuzz wireshark scripts captures
fi

ordinal='first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth|[0-9]+(st|nd|rd|th)'
patterns=(
  # work sessions
  "\\b($ordinal|last|next|previous|this|earlier|later)(['’]s)?\\s+(work(ing)?\\s+)?sessions?\\b"
  "\\bsessions?['’]s?\\s+(start|starting|end|final|first|code|codec|build|figures?|merges?|commits?|work)\\b"
  "\\bsession\\s+by\\s+session\\b"
  "\\bsessions['’]\\s+work\\b"
  # issues of the tracker
  "\\bissues?\\s*#?\\s*[0-9]+\\b"
  "\\bissue-[0-9]+"
  "\\bthe\\s+issue['’]s\\b"
  "\\bthe\\s+issue\\s+(asks|gives|requires|quotes|summarises|summarizes|owner)\\b"
  "\\bissue\\s+owner"
  # a work journal
  "\\bjournal\\b"
  # items of a work list
  "\\(item\\s+[0-9]+\\)"
  "\\bitem\\s+[0-9]+\\s+of\\s+(the\\s+)?(issue|brief|assignment)\\b"
  "\\bthe\\s+brief['’]s\\b"
)
regex=$(IFS='|'; echo "${patterns[*]}")

status=0
grep -rnHIiP \
  --exclude-dir=target --exclude-dir=.git --exclude-dir=corpus --exclude-dir=artifacts \
  --exclude-dir=logs --exclude=wording.sh \
  -e "$regex" -- "$@" || status=$?

case $status in
  0) echo "wording: the lines above speak of the project's own making (sessions, issues, a journal)" >&2
     exit 1 ;;
  1) exit 0 ;;
  *) echo "wording: grep failed (status $status)" >&2
     exit 2 ;;
esac
