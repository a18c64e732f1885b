import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildProgram } from './cli';
import { completionScript } from './completion';

const run = promisify(execFile);
const program = buildProgram(
  { env: {}, stdout: () => undefined, stderr: () => undefined, untilStopped: () => Promise.resolve() },
  () => undefined,
);

/** What bash completes for the words typed (the last one being completed), with the script sourced. */
async function bashCompletes(words: string[]): Promise<string[]> {
  const script = `${completionScript(program, 'bash')}
complete -p rsd >&2
COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')}); COMP_CWORD=${words.length - 1}
_rsd_completions
printf '%s\\n' "\${COMPREPLY[@]}"`;
  const { stdout, stderr } = await run('bash', ['--norc', '--noprofile', '-c', script]);
  expect(stderr).toBe('complete -F _rsd_completions rsd\n');
  return stdout.split('\n').filter(Boolean);
}

/** Whether a shell is on this machine: zsh and fish are checked by their own parser where they are. */
async function hasShell(shell: string): Promise<boolean> {
  return run('sh', ['-c', `command -v ${shell}`]).then(
    () => true,
    () => false,
  );
}

describe('rsd completion', () => {
  test('when bash completes `rsd auth`, then it offers the command groups so named, from the program itself', async () => {
    expect(await bashCompletes(['rsd', 'auth'])).toEqual(['authorizations']);
    expect(await bashCompletes(['rsd', 'authorizations', ''])).toEqual([
      ...program.commands.find((command) => command.name() === 'authorizations')!.commands.map((command) => command.name()),
      '--profile',
      '--help',
    ]);
  });

  test("when bash completes a command's options and a value with choices, then it offers those, after the program's own options too", async () => {
    expect(await bashCompletes(['rsd', '--profile', 'ci', 'authorizations', 'list', '--o'])).toEqual(['--org', '--output']);
    expect(await bashCompletes(['rsd', 'portfolio', 'offers', 'list', '--output', ''])).toEqual(['json', 'table', 'csv', 'ndjson']);
    expect(await bashCompletes(['rsd', 'completion', ''])).toEqual(['--profile', '--help']);
  });

  test.each(['zsh', 'fish'] as const)('when the %s script is made, then it parses, and completes from the same tree', async (shell) => {
    const script = completionScript(program, shell);
    if (shell === 'zsh') {
      // zsh completes through its bash completion: the same function, its words from the same tree.
      expect(script).toMatch(/^#compdef rsd\n/);
      expect(script).toContain('autoload -U +X bashcompinit && bashcompinit');
      expect(script).toContain(completionScript(program, 'bash').split('\n').slice(1).join('\n'));
    } else {
      expect(script).toContain("complete -c rsd -n '__rsd_at \\'authorizations\\'' -a 'list'");
      expect(script).toContain("-l output -x -a 'json table csv ndjson'");
    }
    if (!(await hasShell(shell))) return; // the text's structure is what can be checked without the shell
    const dir = await mkdtemp(join(tmpdir(), 'rsd-completion-'));
    try {
      const file = join(dir, `rsd.${shell}`);
      await writeFile(file, script);
      await run(shell, ['-n', file]);
      const completes = shell === 'fish' ? `source ${file}; complete -C 'rsd auth'` : `HOME=${dir}; source ${file}; complete -p rsd`;
      const { stdout } = await run(shell, [shell === 'zsh' ? '-fc' : '-c', completes]);
      expect(stdout).toMatch(shell === 'fish' ? /^authorizations\t/ : /complete -F _rsd_completions rsd/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
