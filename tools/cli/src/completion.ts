import type { Command, Option } from 'commander';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** One command of the tree: its path below the program, its subcommands and options, and what it is. */
interface Node {
  path: string;
  summary: string;
  commands: string[];
  options: Option[];
}

/** Every command of the program's tree, the program itself first (path ''); the program's options count for every command. */
function nodesOf(program: Command): Node[] {
  const global = program.options.filter((option) => option.long && !['--version'].includes(option.long));
  const nodes: Node[] = [];
  const visit = (command: Command, path: string) => {
    const own = command === program ? program.options : [...command.options, ...global];
    const options = own.filter((option) => option.long !== undefined);
    if (!options.some((option) => option.long === '--help'))
      options.push({ long: '--help', description: 'show help', argChoices: undefined, required: false, optional: false } as Option);
    nodes.push({
      path,
      summary: command.summary() || command.description().split(/[.:;]/)[0]!,
      commands: command.commands.map((sub) => sub.name()),
      options,
    });
    for (const sub of command.commands) visit(sub, path ? `${path} ${sub.name()}` : sub.name());
  };
  visit(program, '');
  return nodes;
}

const takesValue = (option: Option) => option.required || option.optional;

/** A word in single quotes for sh (bash and zsh). */
const sh = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
/** A word in single quotes for fish, where only \ and ' are escaped inside them. */
const fish = (text: string) => `'${text.replace(/[\\']/g, (c) => `\\${c}`)}'`;

/**
 * The completion script for `shell`, made from the program's command tree, so that every command and option the
 * program has is completed and nothing else: after `rsd GROUP` its commands, after a command its options, after an
 * option with choices (`--output`) the choices.
 */
export function completionScript(program: Command, shell: Shell): string {
  const nodes = nodesOf(program);
  return shell === 'fish' ? fishScript(nodes) : bashScript(nodes, shell === 'zsh');
}

function bashScript(nodes: Node[], zsh: boolean): string {
  const groups = nodes.filter((node) => node.path !== '').map((node) => sh(node.path));
  const choices = nodes.flatMap((node) =>
    node.options
      .filter((option) => option.argChoices)
      .map((option) => `    ${sh(`${node.path}|${option.long}`)}) words=${sh(option.argChoices!.join(' '))} ;;`),
  );
  // An option's value (a file, an id, a URL) is the shell's to complete, as a file name.
  const values = [
    ...new Set(
      nodes.flatMap((node) => node.options.filter((option) => takesValue(option) && !option.argChoices).map((option) => option.long!)),
    ),
  ].map((long) => `*'|${long}'`);
  const words = nodes.map(
    (node) => `    ${sh(node.path)}) words=${sh([...node.commands, ...node.options.map((option) => option.long!)].join(' '))} ;;`,
  );
  return [
    zsh
      ? '#compdef rsd\n# rsd completion for zsh (through bash completion): rsd completion zsh > "${fpath[1]}/_rsd", or eval "$(rsd completion zsh)"'
      : '# rsd completion for bash: source <(rsd completion bash), or save it in ~/.local/share/bash-completion/completions/rsd',
    zsh ? '(( $+functions[compdef] )) || { autoload -U +X compinit && compinit }\nautoload -U +X bashcompinit && bashcompinit' : '',
    '_rsd_completions() {',
    '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" path="" word i words=""',
    '  for ((i = 1; i < COMP_CWORD; i++)); do',
    '    word="${COMP_WORDS[i]}"',
    '    case "${path:+$path }$word" in',
    `      ${groups.join('|')}) path="\${path:+$path }$word" ;;`,
    '    esac',
    '  done',
    '  case "$path|$prev" in',
    ...choices,
    values.length > 0 ? `    ${values.join('|')}) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;` : '',
    '    *)',
    '      case "$path" in',
    ...words.map((line) => `    ${line}`),
    '      esac ;;',
    '  esac',
    '  COMPREPLY=($(compgen -W "$words" -- "$cur"))',
    '}',
    'complete -F _rsd_completions rsd',
    '',
  ]
    .filter((line) => line !== '')
    .join('\n');
}

function fishScript(nodes: Node[]): string {
  const paths = nodes.filter((node) => node.path !== '').map((node) => fish(node.path));
  const lines = [
    '# rsd completion for fish: rsd completion fish > ~/.config/fish/completions/rsd.fish',
    'function __rsd_path',
    "    set -l path ''",
    '    for word in (commandline -opc)[2..-1]',
    "        string match -q -- '-*' $word; and continue",
    '        set -l next (string trim -- "$path $word")',
    `        contains -- $next ${paths.join(' ')}; and set path $next`,
    '    end',
    '    echo $path',
    'end',
    'function __rsd_at',
    '    set -l path (__rsd_path)',
    '    test "$path" = "$argv[1]"',
    'end',
    'complete -c rsd -f',
  ];
  for (const node of nodes) {
    const at = `-n ${fish(`__rsd_at ${fish(node.path)}`)}`;
    for (const name of node.commands) {
      const sub = nodes.find((other) => other.path === (node.path ? `${node.path} ${name}` : name));
      lines.push(`complete -c rsd ${at} -a ${fish(name)} -d ${fish(sub?.summary ?? '')}`);
    }
    for (const option of node.options) {
      const value = option.argChoices ? ` -x -a ${fish(option.argChoices.join(' '))}` : takesValue(option) ? ' -r' : '';
      lines.push(`complete -c rsd ${at} -l ${option.long!.slice(2)}${value} -d ${fish(option.description.split(/[.(;]/)[0]!.trim())}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
