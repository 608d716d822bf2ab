#!/usr/bin/env bash
# Checks swiftpush's installed shell completions (sourced by Tests/install/run.sh and
# Tests/deb/run.sh, which define ok and bad and the scratch directory $out):
#   check_completions BIN_DIR SHARE_DIR ZSH_DIR
# BIN_DIR holds the installed swiftpush, SHARE_DIR is the tree's share/ (bash-completion/completions/
# swiftpush and fish/vendor_completions.d/swiftpush.fish under it), ZSH_DIR the directory of
# _swiftpush. Each shell loads the file the way it does on a user's machine (bash-completion's
# loader and fish's vendor directories through XDG_DATA_DIRS, zsh's compinit through fpath) and is
# asked to complete real command lines: `swiftpush wor` gives exactly `worker`, `swiftpush ` offers
# every command the command's own --help lists, and `swiftpush <command> --` every long option that
# command's --help lists. What is expected is read from the installed command, so the check follows
# the CLI as it grows; it fails on a command without options, so it cannot pass on an empty list.
# The shells come from scripts/install-deps.sh (bash-completion, zsh, fish: about 8 MB).

# completion_expectations EXE: writes $out/expected, one line per command: NAME OPTION...
completion_expectations() {
  local exe=$1 sub
  : > "$out/expected"
  # ArgumentParser's SUBCOMMANDS: rows "  name   summary" (two spaces in), up to a blank line.
  for sub in $(awk '/^SUBCOMMANDS:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }' \
                 <<< "$("$exe" --help)"); do
    # Option rows start two spaces in ("  --key <FILE>", "  -v, --verbose"); wrapped text is deeper.
    echo "$sub $(grep -oE '^  (-[a-zA-Z], )?--[a-z0-9][a-z0-9-]*' <<< "$("$exe" "$sub" --help)" | sed 's/.*--/--/' | tr '\n' ' ')" \
      >> "$out/expected"
  done
}

# completion_verdict GOT: compares GOT (lines "LINE<TAB>candidates") with $out/expected; prints
# the problems, returns non-zero when there are any.
completion_verdict() {
  python3 - "$out/expected" "$1" <<'PY'
import sys
expected = [line.split() for line in open(sys.argv[1]) if line.strip()]
got = {}
for line in open(sys.argv[2]):
    asked, _, offered = line.rstrip("\n").partition("\t")
    got[asked] = offered.split()
problems = []
if got.get("swiftpush wor") != ["worker"]:
    problems.append(f"'swiftpush wor' offers {got.get('swiftpush wor')}, not exactly ['worker']")
commands = [e[0] for e in expected]
if "worker" not in commands:
    problems.append(f"swiftpush --help lists no worker command: {commands}")
missing = [c for c in commands if c not in got.get("swiftpush ", [])]
if missing:
    problems.append(f"'swiftpush ' does not offer {missing}")
for command, *options in expected:
    if not options:
        problems.append(f"swiftpush {command} --help lists no option")
    missing = [o for o in options if o not in got.get(f"swiftpush {command} --", [])]
    if missing:
        problems.append(f"'swiftpush {command} --' does not offer {missing}")
for problem in problems:
    print("  " + problem)
if not problems:
    print(f"{len(commands)} commands and their {sum(len(e) - 1 for e in expected)} options offered")
sys.exit(1 if problems else 0)
PY
}

# completion_lines: the command lines every shell is asked to complete (cursor at the end).
completion_lines() {
  echo "swiftpush wor"
  echo "swiftpush "
  awk '{ print "swiftpush " $1 " --" }' "$out/expected"
}

check_completions() {
  local bin=$1 share=$2 zshdir=$3
  local bash_file=$share/bash-completion/completions/swiftpush zsh_file=$zshdir/_swiftpush
  local fish_file=$share/fish/vendor_completions.d/swiftpush.fish summary
  bash scripts/install-deps.sh bash-completion zsh fish
  completion_expectations "$bin/swiftpush"
  completion_lines > "$out/lines"
  mkdir -p "$out/home"
  # Each shell starts from a clean environment: no user configuration, the tree's share/ first.
  local -a clean=(env -i PATH="$bin:/usr/bin:/bin" HOME="$out/home" TERM=dumb XDG_DATA_DIRS="$share:/usr/share")

  # bash: bash-completion's own loader finds the file in XDG_DATA_DIRS/bash-completion/completions;
  # the completion function it registers is called as bash calls it on <TAB>.
  cat > "$out/complete.bash" <<'BASH'
source /usr/share/bash-completion/bash_completion
__load_completion swiftpush || { echo "bash-completion found no completion for swiftpush" >&2; exit 1; }
spec=$(complete -p swiftpush); fn=${spec##*-F }; fn=${fn%% *}
while IFS= read -r line; do
  read -ra COMP_WORDS <<< "$line"
  [[ $line == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )) COMP_LINE=$line COMP_POINT=${#line} COMPREPLY=()
  "$fn" swiftpush "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
  printf '%s\t%s\n' "$line" "${COMPREPLY[*]}"
done
BASH
  summary="  $bash_file is missing or not valid bash"
  if [ -f "$bash_file" ] && bash -n "$bash_file" \
     && "${clean[@]}" bash --norc --noprofile "$out/complete.bash" < "$out/lines" > "$out/bash.got" \
     && summary=$(completion_verdict "$out/bash.got"); then
    ok "bash completion (share/bash-completion/completions/swiftpush, loaded by bash-completion): swiftpush wor -> worker; $summary"
  else echo "$summary"; bad "bash completion from $bash_file"; fi

  # zsh: an interactive zsh in a pseudo-terminal (zpty) with ZSH_DIR in fpath and compinit, typed
  # at as a user would: `swiftpush wor<TAB>` must leave "swiftpush worker " in the line, and
  # list-choices (what <Ctrl-D> does at the end of a line, bound to ^Xl here) lists each line's
  # candidates. A widget bound to ^Xd shows the line between markers (zle -M, which keeps the
  # terminal raw: a widget that prints leaves it cooked for a moment, and keys typed then are lost)
  # and empties it; each read waits for those markers, built from $m so that the echo of the
  # set-up line cannot match them. `timeout` bounds a read that would never match.
  cat > "$out/complete.zsh" <<'ZSH'
zmodload zsh/zpty
zpty -b z zsh -f -i
zpty -w z "PS1= RPS1=; stty columns 4000 rows 1000; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D
LISTMAX=100000; zstyle ':completion:*' verbose no; m=LINE; bindkey '^Xl' list-choices
dump() { zle -M \"<\$m>\$BUFFER</\$m>\"; BUFFER= }; zle -N dump; bindkey '^Xd' dump; print READY\$m"
zpty -r -m z out '*READYLINE*'
zpty -w -n z $'swiftpush wor\t\x18d'
zpty -r -m z out '*</LINE>*'
[[ $out == *'<LINE>swiftpush worker </LINE>'* ]] && print -r -- $'swiftpush wor\tworker'
while IFS= read -r line; do
  [[ $line == 'swiftpush wor' ]] && continue
  zpty -w -n z "$line"$'\x18l\x18d'
  zpty -r -m z out '*</LINE>*'
  words=(${=${${out//$'\e'\[[0-9;?]#[A-Za-z]/ }//[$'\r\n']/ }})
  print -r -- "$line"$'\t'"${(M)words:#[a-z-]*}"
done < $2
zpty -d z
ZSH
  summary="  $zsh_file is missing or not valid zsh"
  if [ -f "$zsh_file" ] && zsh -n "$zsh_file" \
     && timeout 120 "${clean[@]}" zsh -f "$out/complete.zsh" "$zshdir" "$out/lines" > "$out/zsh.got" \
     && summary=$(completion_verdict "$out/zsh.got"); then
    ok "zsh completion ($(basename "$(dirname "$zshdir")")/$(basename "$zshdir")/_swiftpush, through fpath and compinit): swiftpush wor<TAB> -> worker; $summary"
  else echo "$summary"; bad "zsh completion from $zsh_file"; fi

  # fish: vendor_completions.d under XDG_DATA_DIRS, autoloaded for the swiftpush on PATH;
  # `complete -C` prints what <TAB> would offer, one "candidate<TAB>description" per line.
  cat > "$out/complete.fish" <<'FISH'
while read -l line
  printf '%s\t%s\n' "$line" (string join -- ' ' (complete -C"$line" | string replace -r '\t.*' ''))
end
FISH
  summary="  $fish_file is missing or not valid fish"
  if [ -f "$fish_file" ] && fish -n "$fish_file" \
     && "${clean[@]}" fish "$out/complete.fish" < "$out/lines" > "$out/fish.got" \
     && summary=$(completion_verdict "$out/fish.got"); then
    ok "fish completion (share/fish/vendor_completions.d/swiftpush.fish): swiftpush wor -> worker; $summary"
  else echo "$summary"; bad "fish completion from $fish_file"; fi
}
