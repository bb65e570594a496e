import type { Command, Option } from 'commander';

/** One flag as completion sees it. */
export interface CompletionOption {
  /** Every spelling, e.g. `['-o', '--out']`. */
  names: string[];
  description: string;
  /** True when the flag consumes the next word. */
  takesValue: boolean;
  /** Allowed values (commander `.choices()`), offered after the flag. */
  choices: string[];
}

/** One command of the tree. `path` is the words after `gw` (empty for the root). */
export interface CompletionNode {
  path: string[];
  description: string;
  subcommands: CompletionNode[];
  options: CompletionOption[];
  /** Allowed values of the positional arguments (commander `Argument.choices()`). */
  argChoices: string[];
}

/**
 * What completion offers beyond the command tree. `offers`: the words for an option that has no commander choices
 * (a verb's `--resolution`, from the values its contract accepts). `flags`/`args`: words asked of
 * `gw __complete <what>` at Tab time (profile names, cached model ids, journal ids), for a flag's value or for the
 * positional argument of a command path.
 */
export interface CompletionExtras {
  offers?: (o: Option) => readonly string[] | undefined;
  flags?: Record<string, string>;
  args?: Record<string, string>;
}

/**
 * The words completion offers at Tab time from files (cached model ids, journal ids, profile names) are text a
 * gateway or another program wrote. Only words of this strict set are offered; anything else is dropped, never
 * escaped and kept: letters, digits and `._:@+/-`, starting with a letter or digit, at most 200 characters. No
 * shell syntax (`$`, backquote, quotes, spaces, globs, `~`), no control characters (escape sequences), no leading
 * `-` (a flag to compadd).
 */
const COMPLETION_WORD = /^[A-Za-z0-9][A-Za-z0-9._:@+/-]{0,199}$/;

/** True when `word` may be offered by completion (COMPLETION_WORD). */
export function isCompletionWord(word: string): boolean {
  return COMPLETION_WORD.test(word);
}

/** The shells `gw completion` writes scripts for. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;

/** A shell `gw completion` supports. */
export type Shell = (typeof SHELLS)[number];

function optionOf(o: Option, offers: CompletionExtras['offers']): CompletionOption {
  const names = [o.short, o.long].filter((n): n is string => n !== undefined && n !== '');
  return {
    names,
    description: o.description,
    takesValue: o.required || o.optional,
    choices: [...(o.argChoices ?? offers?.(o) ?? [])],
  };
}

/**
 * Reads the commander tree into plain data. Options of the root are global (commander accepts them at any
 * depth), so every node lists them too; the implicit `help` command and `--help` flag are included as commander
 * shows them.
 */
export function completionTree(root: Command, offers?: CompletionExtras['offers']): CompletionNode {
  const help = root.createHelp();
  const globals = help.visibleOptions(root).map((o) => optionOf(o, offers));
  const walk = (cmd: Command, path: string[]): CompletionNode => {
    const own = path.length === 0 ? [] : help.visibleOptions(cmd).map((o) => optionOf(o, offers));
    const seen = new Set(own.flatMap((o) => o.names));
    return {
      path,
      description: cmd.description(),
      subcommands: help.visibleCommands(cmd).map((c) => walk(c, [...path, c.name()])),
      options: [...own, ...globals.filter((g) => !g.names.some((n) => seen.has(n)))],
      argChoices: cmd.registeredArguments.flatMap((a) => a.argChoices ?? []),
    };
  };
  return walk(root, []);
}

function nodes(tree: CompletionNode): CompletionNode[] {
  return [tree, ...tree.subcommands.flatMap(nodes)];
}

/** Quotes text for a POSIX shell single-quoted string (bash, zsh). */
function sq(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Quotes text for fish (single quotes; backslash and quote escaped). */
function fq(text: string): string {
  return `'${text.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}

/** One line of description (shells show a single line). */
function oneLine(text: string): string {
  return text.split('\n')[0]?.trim() ?? '';
}

/** Case arms `"<path>") echo …;;` shared by bash and zsh. */
function caseArms(tree: CompletionNode, value: (n: CompletionNode) => string[]): string {
  return nodes(tree)
    .map((n) => ({ key: n.path.join(' '), words: value(n) }))
    .filter((a) => a.words.length > 0)
    .map((a) => `    ${sq(a.key)}) printf '%s\\n' ${a.words.map(sq).join(' ')} ;;`)
    .join('\n');
}

function choiceArms(tree: CompletionNode): string {
  const arms: string[] = [];
  for (const n of nodes(tree)) {
    for (const o of n.options) {
      if (o.choices.length === 0) continue;
      for (const name of o.names) {
        arms.push(
          `    ${sq(`${n.path.join(' ')}|${name}`)}) printf '%s\\n' ${o.choices.map(sq).join(' ')} ;;`,
        );
      }
    }
  }
  return arms.join('\n');
}

/** `__gw_dyn <cmdpath> <flag or "">`: asks `gw __complete` for a flag's value or a positional argument. */
function dynFunction(x: CompletionExtras): string {
  const flagArms = Object.entries(x.flags ?? {})
    .map(([flag, what]) => `    ${sq(flag)}) what=${sq(what)} ;;`)
    .join('\n');
  const argArms = Object.entries(x.args ?? {})
    .map(([path, what]) => `      ${sq(path)}) what=${sq(what)} ;;`)
    .join('\n');
  return `__gw_dyn() {
  local what=""
  case "$2" in
${flagArms}
  esac
  if [ -z "$2" ]; then
    case "$1" in
${argArms}
    esac
  fi
  # eval: zsh does not split an unquoted $what into words ("ids video"); the words are gw's own, never input.
  if [ -n "$what" ]; then eval "command gw __complete $what" 2>/dev/null; fi
}`;
}

/** Shell functions describing the tree (POSIX `case`, valid in bash and zsh). */
function treeFunctions(tree: CompletionNode, describe: boolean): string {
  const label = (words: string[], desc: string): string[] =>
    describe ? words.map((w) => `${w.replace(/:/g, '\\:')}:${oneLine(desc)}`) : words;
  return `__gw_subs() {
  case "$1" in
${caseArms(tree, (n) => n.subcommands.map((s) => s.path[s.path.length - 1] as string))}
  esac
}
__gw_args() {
  case "$1" in
${caseArms(tree, (n) => n.argChoices)}
  esac
}
__gw_subs_described() {
  case "$1" in
${caseArms(tree, (n) => n.subcommands.flatMap((s) => label([s.path[s.path.length - 1] as string], s.description)))}
  esac
}
__gw_opts() {
  case "$1" in
${caseArms(tree, (n) => n.options.flatMap((o) => label(o.names, o.description)))}
  esac
}
__gw_valopts() {
  case "$1" in
${caseArms(tree, (n) => n.options.filter((o) => o.takesValue).flatMap((o) => o.names))}
  esac
}
__gw_choices() {
  case "$1|$2" in
${choiceArms(tree)}
  esac
}`;
}

/**
 * bash: walks COMP_WORDS to the deepest known command (skipping flags and their values), then offers that
 * command's subcommands, its flags after `-`, a flag's choices after the flag, and files otherwise.
 * Works with bash 3.2 (no associative arrays).
 */
export function bashScript(tree: CompletionNode, x: CompletionExtras = {}): string {
  return `# gw completion for bash (generated by \`gw completion bash\`; regenerate after upgrading gw).
# Load it with:  source <(gw completion bash)   or save it under ~/.local/share/bash-completion/completions/gw
${treeFunctions(tree, false)}
${dynFunction(x)}
__gw_reply() {
  # Adds each line of standard input that starts with $1 to COMPREPLY, as it is. Not compgen -W: it expands
  # every word (command substitution included), and words come from files a gateway filled.
  local w
  while IFS= read -r w; do
    if [ -n "$w" ] && [[ "$w" == "$1"* ]]; then COMPREPLY+=("$w"); fi
  done
}
__gw_path() {
  # Prints the command path of the words before the cursor, e.g. "beta asset".
  local cmdpath="" w i=1
  while [ "$i" -lt "$COMP_CWORD" ]; do
    w="\${COMP_WORDS[i]}"
    case "$w" in
      -*=*) ;;
      -*) if __gw_valopts "$cmdpath" | grep -qxF -- "$w"; then i=$((i + 1)); fi ;;
      *) if __gw_subs "$cmdpath" | grep -qxF -- "$w"; then cmdpath="\${cmdpath:+$cmdpath }$w"; fi ;;
    esac
    i=$((i + 1))
  done
  printf '%s' "$cmdpath"
}
_gw() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" cmdpath words
  [ "$COMP_CWORD" -gt 0 ] && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  cmdpath="$(__gw_path)"
  COMPREPLY=()
  case "$prev" in
    -*=*) ;;
    -*)
      if __gw_valopts "$cmdpath" | grep -qxF -- "$prev"; then
        words="$(__gw_choices "$cmdpath" "$prev")"
        if [ -z "$words" ]; then words="$(__gw_dyn "$cmdpath" "$prev")"; fi
        if [ -n "$words" ]; then __gw_reply "$cur" <<< "$words"; fi
        return 0
      fi
      ;;
  esac
  if [[ "$cur" == -* ]]; then
    __gw_reply "$cur" < <(__gw_opts "$cmdpath")
  else
    __gw_reply "$cur" < <(__gw_subs "$cmdpath"; __gw_args "$cmdpath"; __gw_dyn "$cmdpath" "")
  fi
  return 0
}
complete -o default -o bashdefault -F _gw gw
`;
}

/** zsh: the same walk over \`words\`, offering described subcommands and flags with _describe. */
export function zshScript(tree: CompletionNode, x: CompletionExtras = {}): string {
  return `#compdef gw
# gw completion for zsh (generated by \`gw completion zsh\`; regenerate after upgrading gw).
# Save it as _gw in a directory of $fpath (e.g. gw completion zsh > "\${fpath[1]}/_gw"), or: source <(gw completion zsh)
${treeFunctions(tree, true)}
${dynFunction(x)}
_gw() {
  # Not "path": in zsh that name is tied to $PATH.
  local cmdpath="" w prev i=2
  local -a items plain
  while (( i < CURRENT )); do
    w="\${words[i]}"
    case "$w" in
      -*=*) ;;
      -*) if __gw_valopts "$cmdpath" | grep -qxF -- "$w"; then (( i++ )); fi ;;
      *) if __gw_subs "$cmdpath" | grep -qxF -- "$w"; then cmdpath="\${cmdpath:+$cmdpath }$w"; fi ;;
    esac
    (( i++ ))
  done
  prev="\${words[CURRENT-1]}"
  if [[ "$prev" == -* && "$prev" != *=* ]] && __gw_valopts "$cmdpath" | grep -qxF -- "$prev"; then
    items=("\${(@f)$(__gw_choices "$cmdpath" "$prev"; __gw_dyn "$cmdpath" "$prev")}")
    if [[ -n "\${items[1]}" ]]; then compadd -a items; else _files; fi
    return
  fi
  if [[ "\${words[CURRENT]}" == -* ]]; then
    items=("\${(@f)$(__gw_opts "$cmdpath")}")
    _describe -t options 'option' items
  else
    # Subcommands with their descriptions; argument choices and ids as plain words (_describe would split an
    # id at a colon).
    items=("\${(@f)$(__gw_subs_described "$cmdpath")}")
    plain=("\${(@f)$(__gw_args "$cmdpath"; __gw_dyn "$cmdpath" "")}")
    if [[ -n "\${items[1]}" ]]; then _describe -t commands 'command' items; fi
    if [[ -n "\${plain[1]}" ]]; then compadd -a plain; fi
    if [[ -z "\${items[1]}\${plain[1]}" ]]; then _files; fi
  fi
}
if [[ "\${zsh_eval_context[-1]}" == loadautofunc ]]; then
  _gw "$@"
else
  compdef _gw gw
fi
`;
}

/** fish: one \`complete\` line per subcommand and flag, conditioned on the command path before the cursor. */
export function fishScript(tree: CompletionNode, x: CompletionExtras = {}): string {
  const lines: string[] = [];
  for (const [flag, what] of Object.entries(x.flags ?? {})) {
    const spell = flag.startsWith('--') ? `-l ${fq(flag.slice(2))}` : `-s ${fq(flag.slice(1))}`;
    lines.push(`complete -c gw ${spell} -x -a ${fq(`(gw __complete ${what} 2>/dev/null)`)}`);
  }
  for (const [path, what] of Object.entries(x.args ?? {})) {
    lines.push(
      `complete -c gw -f -n ${fq(`__gw_at ${fq(path)}`)} -a ${fq(`(gw __complete ${what} 2>/dev/null)`)}`,
    );
  }
  const subsArms: string[] = [];
  const valArms: string[] = [];
  for (const n of nodes(tree)) {
    const key = n.path.join(' ');
    const cond = `-n ${fq(`__gw_at ${fq(key)}`)}`;
    if (n.subcommands.length > 0) {
      const names = n.subcommands.map((s) => s.path[s.path.length - 1] as string);
      subsArms.push(`    case ${fq(key)}\n      printf '%s\\n' ${names.map(fq).join(' ')}`);
      for (const s of n.subcommands) {
        lines.push(
          `complete -c gw -f ${cond} -a ${fq(s.path[s.path.length - 1] as string)} -d ${fq(oneLine(s.description))}`,
        );
      }
    }
    if (n.argChoices.length > 0) {
      lines.push(`complete -c gw -f ${cond} -a ${fq(n.argChoices.join(' '))}`);
    }
    const vals = n.options.filter((o) => o.takesValue).flatMap((o) => o.names);
    if (vals.length > 0) valArms.push(`    case ${fq(key)}\n      printf '%s\\n' ${vals.map(fq).join(' ')}`);
    for (const o of n.options) {
      const spell = o.names
        .map((name) => (name.startsWith('--') ? `-l ${fq(name.slice(2))}` : `-s ${fq(name.slice(1))}`))
        .join(' ');
      const value = o.takesValue ? (o.choices.length > 0 ? ` -x -a ${fq(o.choices.join(' '))}` : ' -r') : '';
      lines.push(`complete -c gw ${cond} ${spell}${value} -d ${fq(oneLine(o.description))}`);
    }
  }
  return `# gw completion for fish (generated by \`gw completion fish\`; regenerate after upgrading gw).
# Save it as ~/.config/fish/completions/gw.fish (gw completion fish > ~/.config/fish/completions/gw.fish)
function __gw_subs
  switch "$argv[1]"
${subsArms.join('\n')}
  end
end
function __gw_valopts
  switch "$argv[1]"
${valArms.join('\n')}
  end
end
function __gw_path
  # The command path of the words before the cursor, e.g. "beta asset".
  set -l words (commandline -opc)
  set -e words[1]
  set -l cmdpath
  set -l skip 0
  for w in $words
    if test $skip = 1
      set skip 0
      continue
    end
    switch $w
      case '-*=*'
      case '-*'
        if contains -- $w (__gw_valopts "$cmdpath")
          set skip 1
        end
      case '*'
        if contains -- $w (__gw_subs "$cmdpath")
          set cmdpath (string trim -- "$cmdpath $w")
        end
    end
  end
  echo "$cmdpath"
end
function __gw_at
  set -l p (__gw_path)
  test "$p" = "$argv[1]"
end
complete -c gw -e
${lines.join('\n')}
`;
}

/** The completion script for `shell`. */
export function completionScript(shell: Shell, root: Command, x: CompletionExtras = {}): string {
  const tree = completionTree(root, x.offers);
  if (shell === 'bash') return bashScript(tree, x);
  if (shell === 'zsh') return zshScript(tree, x);
  return fishScript(tree, x);
}
